-- a script of one's own: runs as it is, whatever idempotency.jdbc.table-name says
CREATE TABLE own_records (
	workflow VARCHAR(255) NOT NULL,
	idempotency_key VARCHAR(255) NOT NULL,
	status VARCHAR(16) NOT NULL,
	fingerprint VARCHAR(128),
	owner VARCHAR(100) NOT NULL,
	attempt INT NOT NULL,
	lease_until BIGINT NOT NULL,
	recovery_point VARCHAR(4000),
	response VARCHAR(4000),
	error_type VARCHAR(512),
	error_message VARCHAR(4000),
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	PRIMARY KEY (workflow, idempotency_key)
);

CREATE TABLE idempotency_record (legacy INT);
