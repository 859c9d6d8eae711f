"""Outside services Kindling depends on: the cache store, the rate limiter, the circuit breaker,
health checks, outbound HTTP and the AI palette provider."""
