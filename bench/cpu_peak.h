/* The CPU's measured fp32 FMA peak and clock: the denominators of the CPU GEMM / conv / DiT block
 * rooflines in bench/ (bench/cpu_peak.c). Bench-only: nothing in the engine depends on them. */
#ifndef LTX2_BENCH_CPU_PEAK_H
#define LTX2_BENCH_CPU_PEAK_H

/* Machine fp32 peak, measured: independent FMA chains of the widest vector this build targets,
 * on all OpenMP threads, for at least min_seconds. Returns FLOP/s. */
double ltx2_cpu_measure_fma_peak(double min_seconds);
/* Core clock in Hz from a chain of dependent integer adds (1 cycle each on x86); 0 when it cannot
 * be measured on this architecture. */
double ltx2_cpu_measure_clock_hz(void);
/* fp32 FLOPs per cycle per core this build's vector ISA allows, assuming two FMA pipes
 * (AVX-512: 2*16*2 = 64, AVX2: 2*8*2 = 32, otherwise 2). */
int ltx2_cpu_flops_per_cycle(void);

#endif
