package io.github.idempotency.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.core.IdempotencyEngine;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.annotation.AnnotationTransactionAttributeSource;
import org.springframework.transaction.interceptor.TransactionAttribute;
import org.springframework.transaction.interceptor.TransactionAttributeSource;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.StringUtils;

/**
 * Begins the transaction a {@code @Transactional @Idempotent} method declares before the
 * engine claims its key, when no transaction is active yet — so that the claim, the
 * business writes and the completion commit or roll back together whatever the order of
 * the two advisors. The method's own transaction advisor then joins this transaction.
 */
public class TransactionalInvocationWrapper implements IdempotentInterceptor.InvocationWrapper {

	private final TransactionAttributeSource attributes = new AnnotationTransactionAttributeSource();

	private final BeanFactory beanFactory;

	public TransactionalInvocationWrapper(BeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public @Nullable Object invoke(Method method, Class<?> targetClass, IdempotencyEngine.Action call)
			throws Throwable {
		TransactionAttribute attribute = this.attributes.getTransactionAttribute(method, targetClass);
		if (attribute == null || TransactionSynchronizationManager.isActualTransactionActive()) {
			return call.proceed();
		}
		PlatformTransactionManager manager = transactionManager(attribute);
		TransactionStatus status = manager.getTransaction(attribute);
		Object result;
		try {
			result = call.proceed();
		}
		catch (Throwable ex) {
			if (attribute.rollbackOn(ex)) {
				manager.rollback(status);
			}
			else {
				manager.commit(status);
			}
			throw ex;
		}
		manager.commit(status);
		return result;
	}

	private PlatformTransactionManager transactionManager(TransactionAttribute attribute) {
		String qualifier = attribute.getQualifier();
		return StringUtils.hasText(qualifier) ? this.beanFactory.getBean(qualifier, PlatformTransactionManager.class)
				: this.beanFactory.getBean(PlatformTransactionManager.class);
	}

}
