package io.github.idempotency.autoconfigure.aop;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An {@link Idempotent} method declared in a generic type returns its type variable: the
 * stored result is read back as the type the bean's class binds it to, and a variable
 * that nothing binds fails the start.
 */
class IdempotentGenericResultTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class,
				IdempotencyAutoConfiguration.class))
		.withPropertyValues("idempotency.backend=memory");

	@Test
	void aDuplicateOfAMethodInAGenericSuperclassReturnsTheBoundType() {
		this.runner.withUserConfiguration(Handlers.class).run((context) -> {
			ReceiptHandler handler = context.getBean(ReceiptHandler.class);
			Receipt first = handler.handle("k-1");
			Object second = handler.handle("k-1");
			assertThat(second).isInstanceOf(Receipt.class).isEqualTo(first);
			assertThat(handler.runs()).isOne();
		});
	}

	@Test
	void aDuplicateCalledThroughTheGenericTypeReturnsTheBoundType() {
		this.runner.withUserConfiguration(Handlers.class).run((context) -> {
			Handler<Receipt> handler = context.getBean(ReceiptHandler.class);
			handler.handle("k-2");
			Object second = handler.handle("k-2");
			assertThat(second).isInstanceOf(Receipt.class);
		});
	}

	@Test
	void typeVariablesInsideGenericResultsAreResolvedToo() {
		this.runner.withUserConfiguration(Handlers.class).run((context) -> {
			ReceiptHandler handler = context.getBean(ReceiptHandler.class);
			handler.history("c-1");
			List<Receipt> history = handler.history("c-1");
			assertThat(history).singleElement().isInstanceOf(Receipt.class);
			handler.byCustomer("c-2");
			Map<String, List<Receipt>> byCustomer = handler.byCustomer("c-2");
			assertThat(byCustomer.get("c-2")).singleElement().isInstanceOf(Receipt.class);
			handler.batch("b-1");
			Receipt[] batch = handler.batch("b-1");
			assertThat(batch).singleElement().isInstanceOf(Receipt.class);
		});
	}

	@Test
	void aVariableBoundTwoLevelsDownIsResolved() {
		this.runner.withUserConfiguration(Handlers.class).run((context) -> {
			ListHandler handler = context.getBean(ListHandler.class);
			handler.handle("k-3");
			List<Receipt> second = handler.handle("k-3");
			assertThat(second).singleElement().isInstanceOf(Receipt.class);
		});
	}

	@Test
	void aDuplicateOfAGenericInterfaceMethodReturnsTheBoundType() {
		this.runner.withUserConfiguration(Handlers.class).run((context) -> {
			ReceiptProcessor processor = context.getBean(ReceiptProcessor.class);
			processor.process("k-4");
			Object second = processor.process("k-4");
			assertThat(second).isInstanceOf(Receipt.class);
		});
	}

	@Test
	void aTypeVariableTheBeanClassDoesNotBindFailsTheStartNamingTheMethod() {
		this.runner.withUserConfiguration(Unbound.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasMessageContaining(UnboundHandler.class.getName() + ".handle")
				.hasMessageContaining("type variable R");
		});
	}

	@Test
	void aMethodTypeVariableFailsTheStartNamingTheMethod() {
		this.runner.withUserConfiguration(GenericMethod.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasMessageContaining(GenericMethodService.class.getName() + ".load")
				.hasMessageContaining("type variable T");
		});
	}

	record Receipt(String id, int sequence) {
	}

	abstract static class Handler<R> {

		private final AtomicInteger runs = new AtomicInteger();

		int runs() {
			return this.runs.get();
		}

		@Idempotent(key = "#p0", workflow = "handle")
		public R handle(String key) {
			return create(key, this.runs.incrementAndGet());
		}

		@Idempotent(key = "#p0", workflow = "history")
		public List<R> history(String customer) {
			return List.of(create(customer, this.runs.incrementAndGet()));
		}

		@Idempotent(key = "#p0", workflow = "by-customer")
		public Map<String, List<R>> byCustomer(String customer) {
			return Map.of(customer, List.of(create(customer, this.runs.incrementAndGet())));
		}

		@Idempotent(key = "#p0", workflow = "batch")
		public R[] batch(String key) {
			R[] batch = newArray();
			batch[0] = create(key, this.runs.incrementAndGet());
			return batch;
		}

		abstract R create(String key, int sequence);

		abstract R[] newArray();

	}

	static class ReceiptHandler extends Handler<Receipt> {

		@Override
		Receipt create(String key, int sequence) {
			return new Receipt(key, sequence);
		}

		@Override
		Receipt[] newArray() {
			return new Receipt[1];
		}

	}

	abstract static class ListHandlerBase<E> extends Handler<List<E>> {

	}

	static class ListHandler extends ListHandlerBase<Receipt> {

		@Override
		List<Receipt> create(String key, int sequence) {
			return List.of(new Receipt(key, sequence));
		}

		@SuppressWarnings("unchecked")
		@Override
		List<Receipt>[] newArray() {
			return new List[1];
		}

	}

	interface Processor<R> {

		@Idempotent(key = "#p0", workflow = "process")
		R process(String key);

	}

	static class ReceiptProcessor implements Processor<Receipt> {

		@Override
		public Receipt process(String key) {
			return new Receipt(key, 1);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		@Bean
		ReceiptHandler receiptHandler() {
			return new ReceiptHandler();
		}

		@Bean
		ListHandler listHandler() {
			return new ListHandler();
		}

		@Bean
		ReceiptProcessor receiptProcessor() {
			return new ReceiptProcessor();
		}

	}

	abstract static class SingleHandler<R> {

		@Idempotent(key = "#p0")
		public R handle(String key) {
			throw new UnsupportedOperationException();
		}

	}

	static class UnboundHandler<R> extends SingleHandler<R> {

	}

	@Configuration(proxyBeanMethods = false)
	static class Unbound {

		@Bean
		UnboundHandler<Receipt> unboundHandler() {
			return new UnboundHandler<>();
		}

	}

	static class GenericMethodService {

		@Idempotent(key = "#p0")
		public <T> T load(String key) {
			throw new UnsupportedOperationException();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class GenericMethod {

		@Bean
		GenericMethodService genericMethodService() {
			return new GenericMethodService();
		}

	}

}
