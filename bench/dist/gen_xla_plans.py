"""Generates XLA's resharding plans (bench/dist/xla_plans.jsonl) for `laycert dist check --xla-hlo`.
Run: python3 bench/dist/gen_xla_plans.py  (jax 0.10, CPU, 8 host devices; about 30 s).

Per case: `jax.jit(lambda x: x, out_shardings=dst)` on an input placed with `src`, on a Mesh over
1-D/2-D/3-D device grids (extents 3 and 6 included, and meshes over permuted devices); and 16
partial sums: a matmul whose output stays `unreduced` over some axes (Explicit meshes), resharded
by `jax.sharding.reshard` (XLA all-reduces, then slices). Recorded:
the mesh in laycert's notation (`a=2,b=4 devices=[..]` when permuted), the tensor shape, both
shardings as XLA's HLO sharding text, the compiled (post SPMD partitioning, fused, scheduled)
HLO text with metadata stripped, the elements each device receives by the collectives
(gen_dist_vectors.hlo_collectives: the same measure as cases.jsonl), and every device's output
shard (the flat element ids of the input `arange`, row-major), indexed by device id.
"""
import json, os, random, re, sys, warnings

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "peers"))
from gen_dist_vectors import NAMES, hlo_collectives, mesh_text  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "xla_plans.jsonl")
MESHES = [
    ((8,), None), ((4,), None), ((6,), None), ((3,), None),
    ((2, 4), None), ((4, 2), None), ((2, 3), None), ((3, 2), None),
    ((2, 2, 2), None), ((2, 1, 3), None),
    ((4,), [2, 0, 3, 1]), ((2, 4), [0, 2, 4, 6, 1, 3, 5, 7]), ((2, 2, 2), [0, 4, 2, 6, 1, 5, 3, 7]),
]
PER_MESH = 5
# Partial sums: a matmul whose output stays unreduced over these axes, then resharded.
UNREDUCED = [((2, 2), ("a",)), ((2, 2), ("b",)), ((2, 4), ("a",)), ((2, 4), ("b",)), ((2, 2, 2), ("a",)),
             ((2, 2, 2), ("a", "c")), ((4,), ("a",)), ((2, 3), ("b",))]


def random_spec(rng, mesh, nd):
    """A PartitionSpec as a list of axis-name lists: each mesh axis on at most one tensor dim."""
    entries = [[] for _ in range(nd)]
    for a in NAMES[: len(mesh)]:
        if rng.random() < 0.7:
            entries[rng.randrange(nd)].append(a)
    return entries


def gen_cases(seed=2210):
    rng = random.Random(seed)
    cases = []
    for mesh, devices in MESHES:
        ext = dict(zip(NAMES, mesh))
        made = 0
        while made < PER_MESH:
            nd = rng.choice([2, 2, 3])
            shape = [rng.choice([8, 12, 24]) for _ in range(nd)] if nd == 2 else \
                [rng.choice([4, 6, 8, 12]) for _ in range(nd)]
            src, dst = random_spec(rng, mesh, nd), random_spec(rng, mesh, nd)
            if src == dst:
                continue
            fits = lambda sp: all(shape[d] % max(1, eval("*".join(str(ext[a]) for a in e) or "1")) == 0
                                  for d, e in enumerate(sp))
            if not (fits(src) and fits(dst)):
                continue
            cases.append({"mesh": list(mesh), "devices": devices, "shape": shape, "src": src, "dst": dst})
            made += 1
    for mesh, u in UNREDUCED:
        for _ in range(2):
            free = [a for a in NAMES[: len(mesh)] if a not in u]
            dst = random_spec(rng, mesh, 2)
            dst = [[a for a in e if rng.random() < 0.5 or a in free] for e in dst]
            cases.append({"mesh": list(mesh), "devices": None, "shape": [24, 24], "unreduced": list(u),
                          "src": [[], []], "dst": dst})
    return cases


def strip_metadata(text):
    """Drops `metadata={..}` and the stack-frame tables XLA prints before the computations."""
    text = re.sub(r", metadata=\{[^}]*\}", "", text)
    return re.sub(r"\n(FileNames|FunctionNames|FileLocations|StackFrames)\n(\d+ [^\n]*\n)*", "\n", text)


def main():
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P, AxisType

    devs = np.array(jax.devices())
    to_p = lambda sp: P(*[None if not e else (e[0] if len(e) == 1 else tuple(e)) for e in sp])
    with open(OUT, "w") as f:
        for i, c in enumerate(gen_cases()):
            mesh_shape, shape = c["mesh"], c["shape"]
            n = int(np.prod(mesh_shape))
            order = c["devices"] or list(range(n))
            names = tuple(NAMES[: len(mesh_shape)])
            full = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
            if "unreduced" in c:
                # x @ y with the contraction split over the unreduced axes: each device holds an
                # addend of `full` (x picks columns of y, y's rows sum to `full`).
                mesh = Mesh(devs[order].reshape(mesh_shape), names, axis_types=(AxisType.Explicit,) * len(names))
                u = tuple(c["unreduced"])
                k = int(np.prod([mesh_shape[names.index(a)] for a in u]))
                xm = np.tile(np.eye(shape[0], dtype=np.float32), (1, k))
                ym = np.concatenate([full * (j + 1) for j in range(k)]) / (k * (k + 1) / 2)
                with jax.set_mesh(mesh):
                    xs = jax.device_put(xm, NamedSharding(mesh, P(None, u)))
                    ys = jax.device_put(ym, NamedSharding(mesh, P(u, None)))
                    x = jax.jit(lambda a, b: jnp.dot(a, b, out_sharding=P(None, None, unreduced=set(u))))(xs, ys)
                    ss, ds = x.sharding, NamedSharding(mesh, to_p(c["dst"]))
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        comp = jax.jit(lambda v: jax.sharding.reshard(v, to_p(c["dst"]))).lower(x).compile()
            else:
                mesh = Mesh(devs[order].reshape(mesh_shape), names)
                ss, ds = NamedSharding(mesh, to_p(c["src"])), NamedSharding(mesh, to_p(c["dst"]))
                x = jax.device_put(full, ss)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    comp = jax.jit(lambda v: v, out_shardings=ds).lower(x).compile()
            text = strip_metadata(comp.as_text())
            y = comp(x)
            shards = [None] * n
            for s in y.addressable_shards:
                # The run's values, checked against the tensor; recorded as flat element ids.
                assert np.allclose(np.asarray(s.data), full[s.index]), (i, s.device)
                shards[s.device.id] = np.asarray(full[s.index]).astype(np.int64).reshape(-1).tolist()
            mtext = mesh_text(mesh_shape) + ("" if c["devices"] is None else
                                             " devices=[" + ",".join(map(str, order)) + "]")
            rec = {"id": i, "mesh": mtext, "shape": shape, "src_spec": c["src"], "dst_spec": c["dst"],
                   "unreduced": c.get("unreduced", []),
                   "src": str(ss._to_xla_hlo_sharding(len(shape))), "dst": str(ds._to_xla_hlo_sharding(len(shape))),
                   "recv_elems": sum(cl["recv"] for cl in hlo_collectives(text, n)),
                   "hlo": text, "shards": shards}
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    print(f"wrote {i + 1} cases to {OUT}")


if __name__ == "__main__":
    main()
