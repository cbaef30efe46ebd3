CREATE TABLE IF NOT EXISTS idempotency_record (
	workflow VARCHAR(255) NOT NULL,
	idempotency_key VARCHAR(255) NOT NULL,
	status VARCHAR(16) NOT NULL,
	fingerprint VARCHAR(128),
	owner VARCHAR(100) NOT NULL,
	attempt INT NOT NULL,
	lease_until BIGINT NOT NULL,
	recovery_point CHARACTER LARGE OBJECT,
	response CHARACTER LARGE OBJECT,
	error_type VARCHAR(512),
	error_message CHARACTER LARGE OBJECT,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	PRIMARY KEY (workflow, idempotency_key)
);

CREATE INDEX IF NOT EXISTS idempotency_record_expires_at ON idempotency_record (expires_at);
