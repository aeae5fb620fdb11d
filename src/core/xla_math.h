/* XLA:CPU's f32 elementwise math where it is not the correctly rounded result: what JAX's CPU
 * backend computes for MaxDiffusion's code (tests/golden/MAXDIFFUSION_NUMERICS.md (e)). Under bf16
 * rounding a one-ulp difference in an f32 input can flip a rounding and spread from there, so the
 * MaxDiffusion semantics reproduce these bit for bit where the model needs them. */
#ifndef LTX2_CORE_XLA_MATH_H
#define LTX2_CORE_XLA_MATH_H

/* jnp.exp on f32 as XLA:CPU (jaxlib 0.10) evaluates it: the Cephes polynomial with fused
 * multiply-adds. Bit-exact against jax.jit(jnp.exp) on 300,000 inputs in [-10, 10] (within 10.5 of
 * either f32 limit it may differ; the DiT's timestep frequencies lie in [-9.22, 0]). */
float ltx2_xla_expf(float x);

#endif
