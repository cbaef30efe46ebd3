package io.github.idempotency.aop;

import java.lang.reflect.Method;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * A method's default workflow: its class, name and parameter types, shortened to fit a
 * column and still distinct.
 */
class DefaultWorkflowsTest {

	@Test
	void aShortNameIsTheClassTheMethodAndItsParameterTypes() throws Exception {
		Method charge = Payments.class.getMethod("charge", String.class, int.class);
		assertThat(DefaultWorkflows.name(charge, Payments.class))
			.isEqualTo(Payments.class.getName() + ".charge(String,int)");
	}

	@Test
	void aVeryLongNameIsShortenedAndStaysDistinct() throws Exception {
		String ten = DefaultWorkflows.name(LongNames.class.getMethod("handle", parameters(10)), LongNames.class);
		String eleven = DefaultWorkflows.name(LongNames.class.getMethod("handle", parameters(11)), LongNames.class);
		assertThat(ten).hasSize(DefaultWorkflows.MAX_LENGTH)
			.startsWith(LongNames.class.getName() + ".handle(")
			.matches(".*~[0-9a-f]{16}")
			.isNotEqualTo(eleven);
		assertThat(eleven).hasSize(DefaultWorkflows.MAX_LENGTH);
	}

	@Test
	void twoMethodsOfOneClassWithTheSameDefaultAreRefused() throws Exception {
		DefaultWorkflows workflows = new DefaultWorkflows();
		Method first = Payments.class.getMethod("at", java.util.Date.class);
		Method second = Payments.class.getMethod("at", java.sql.Date.class);
		workflows.of(first, Payments.class);
		assertThat(workflows.of(first, Payments.class)).endsWith(".at(Date)");
		assertThatIllegalArgumentException().isThrownBy(() -> workflows.of(second, Payments.class))
			.withMessageContaining("set 'workflow' on one of them");
	}

	private static Class<?>[] parameters(int count) {
		Class<?>[] types = new Class<?>[count];
		Arrays.fill(types, AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong.class);
		return types;
	}

	public static class Payments {

		public void charge(String key, int amount) {
		}

		public void at(java.util.Date date) {
		}

		public void at(java.sql.Date date) {
		}

	}

	public static class LongNames {

		public void handle(AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a1,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a2,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a3,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a4,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a5,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a6,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a7,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a8,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a9,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a10) {
		}

		public void handle(AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a1,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a2,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a3,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a4,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a5,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a6,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a7,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a8,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a9,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a10,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a11) {
		}

	}

	public static class AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong {

	}

}
