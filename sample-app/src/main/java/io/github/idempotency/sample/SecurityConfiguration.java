package io.github.idempotency.sample;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * {@code /my/**} needs one of two users over basic auth ({@code alice}/{@code alice-pw},
 * {@code bob}/{@code bob-pw}: a sample, not a way to keep passwords); everything else,
 * {@code POST /payments} and the Actuator among it, stays open. No CSRF token: a JSON API
 * whose clients send credentials with each request.
 */
@Configuration(proxyBeanMethods = false)
public class SecurityConfiguration {

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) {
		return http
			.authorizeHttpRequests(
					(requests) -> requests.requestMatchers("/my/**").authenticated().anyRequest().permitAll())
			.httpBasic(Customizer.withDefaults())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@Bean
	UserDetailsService customers() {
		return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}alice-pw").build(),
				User.withUsername("bob").password("{noop}bob-pw").build());
	}

}
