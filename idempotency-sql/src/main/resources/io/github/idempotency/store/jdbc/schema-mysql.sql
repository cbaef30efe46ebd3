-- workflow and key are binary: compared byte for byte (a _bin collation pads trailing spaces)
CREATE TABLE IF NOT EXISTS idempotency_record (
	workflow VARBINARY(1020) NOT NULL,
	idempotency_key VARBINARY(1020) NOT NULL,
	status VARCHAR(16) NOT NULL,
	fingerprint VARCHAR(128),
	owner VARCHAR(100) NOT NULL,
	attempt INT NOT NULL,
	lease_until BIGINT NOT NULL,
	recovery_point TEXT,
	response LONGTEXT,
	error_type VARCHAR(512),
	error_message TEXT,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	PRIMARY KEY (workflow, idempotency_key),
	INDEX idempotency_record_expires_at (expires_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
