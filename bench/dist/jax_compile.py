"""JAX's compile time for the benchmark resharding on the largest mesh JAX runs on the CPU here
(8 host devices, mesh 2x2x2): python3 bench/dist/jax_compile.py"""
import os, time
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import numpy as np, jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(2, 2, 2), ("a", "b", "c"))
for shape, src, dst in [((1024, 1024), P("a", "b"), P("c", "a")), ((4096, 8192), P("a", None), P("c", "b"))]:
    x = jax.device_put(np.zeros(shape, np.float32), NamedSharding(mesh, src))
    times = []
    for i in range(5):
        f = jax.jit(lambda v, i=i: v + 0 * i, out_shardings=NamedSharding(mesh, dst))
        t0 = time.perf_counter(); f.lower(x).compile(); times.append(time.perf_counter() - t0)
    print(f"jax {jax.__version__} mesh 2x2x2 {shape} {src} -> {dst}: compile min {min(times)*1e3:.1f} ms median {sorted(times)[2]*1e3:.1f} ms")
