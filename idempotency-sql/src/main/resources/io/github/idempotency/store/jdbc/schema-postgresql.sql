-- workflow and key compare in byte order ("C"): no locale's rules on every index lookup
CREATE TABLE IF NOT EXISTS idempotency_record (
	workflow VARCHAR(255) COLLATE "C" NOT NULL,
	idempotency_key VARCHAR(255) COLLATE "C" NOT NULL,
	status VARCHAR(16) NOT NULL,
	fingerprint VARCHAR(128),
	owner VARCHAR(100) NOT NULL,
	attempt INT NOT NULL,
	lease_until BIGINT NOT NULL,
	recovery_point TEXT,
	response TEXT,
	error_type VARCHAR(512),
	error_message TEXT,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	PRIMARY KEY (workflow, idempotency_key)
);

CREATE INDEX IF NOT EXISTS idempotency_record_expires_at ON idempotency_record (expires_at);
