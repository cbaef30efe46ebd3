package io.github.idempotency.benchmarks;

import javax.sql.DataSource;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The PostgreSQL and Redis clients as Spring Boot configures them (Hikari, one shared
 * Lettuce connection), for the baselines and the peers.
 */
@State(Scope.Benchmark)
public class ServersState {

	ConfigurableApplicationContext context;

	DataSource dataSource;

	JdbcClient jdbc;

	TransactionTemplate transactions;

	RedisConnectionFactory redisConnections;

	StringRedisTemplate redis;

	ObjectWriter writer;

	ObjectReader reader;

	@Setup(Level.Trial)
	public void start() {
		this.context = context();
		this.dataSource = this.context.getBean(DataSource.class);
		this.jdbc = this.context.getBean(JdbcClient.class);
		this.transactions = this.context.getBean(TransactionTemplate.class);
		this.redisConnections = this.context.getBean(RedisConnectionFactory.class);
		this.redis = this.context.getBean(StringRedisTemplate.class);
		JsonMapper jsonMapper = this.context.getBean(JsonMapper.class);
		this.writer = jsonMapper.writerFor(Receipt.class);
		this.reader = jsonMapper.readerFor(Receipt.class);
	}

	/**
	 * The application whose clients this state holds.
	 * @return the running context
	 */
	protected ConfigurableApplicationContext context() {
		return BenchmarkContexts.servers();
	}

	@TearDown(Level.Trial)
	public void stop() {
		this.context.close();
	}

	/**
	 * Removes the dead rows of {@code table} and refreshes its statistics, so that every
	 * contender starts from a table in the same shape whatever earlier runs left behind
	 * (the local PostgreSQL runs with autovacuum off); on MariaDB, refreshes its statistics.
	 * @param jdbc the database
	 * @param table the table
	 */
	static void vacuum(JdbcClient jdbc, String table) {
		if (isMariaDb(jdbc)) {
			jdbc.sql("ANALYZE TABLE " + table).query().listOfRows();
		}
		else {
			jdbc.sql("VACUUM ANALYZE " + table).update();
		}
	}

	/**
	 * Refreshes the statistics of {@code table}, as autovacuum would while a table grows
	 * from empty (the local PostgreSQL runs with autovacuum off): without it the plans made
	 * while the table was empty, sequential scans, stay cached in each connection's prepared
	 * statements however large it grows.
	 * @param jdbc the database
	 * @param table the table
	 */
	static void analyze(JdbcClient jdbc, String table) {
		if (isMariaDb(jdbc)) {
			jdbc.sql("ANALYZE TABLE " + table).query().listOfRows();
		}
		else {
			jdbc.sql("ANALYZE " + table).update();
		}
	}

	static boolean isMariaDb(JdbcClient jdbc) {
		return jdbc.sql("SELECT version()").query(String.class).single().contains("MariaDB");
	}

}
