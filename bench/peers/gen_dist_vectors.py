"""Generates the distributed-layout oracle cases (bench/dist/cases.jsonl) from PyTorch DTensor and
JAX on the CPU. Run: python3 bench/peers/gen_dist_vectors.py  (about a minute; torch 2.15,
jax 0.10). Each world size runs in its own process (the fake process group has one world size).

Per case (mesh, shape, source and target placements, generated with a fixed seed):
- dtensor: the transform sequence `_gen_transform_infos` chooses under the fake process group
  (world size = mesh size), and every rank's (local shape, global offset) for source and target
  from `_compute_local_shape_and_global_offset` (DTensor's own shard rule).
- jax (cases without Partial): the PartitionSpecs, every device's index box for source and target
  (`devices_indices_map`), the collectives of the compiled reshard (`jit(identity,
  out_shardings=...)`) from the HLO text with the elements each device receives, whether every
  device's output shard equals the input's elements (a run on 8 host devices), compile seconds.

`python3 bench/peers/gen_dist_vectors.py --more` (about 30 s) writes bench/dist/cases_more.jsonl
and leaves cases.jsonl alone:
- kind "permuted": DeviceMeshes built from a permuted tensor of ranks, placements with negative
  Shard dims. DTensor: the placements `distribute_tensor` normalizes them to, the transforms, and
  every rank's (local shape, offset) at the coordinate DeviceMesh gives it ((mesh == rank)
  .nonzero()). JAX (even cases without Partial) on a Mesh over the same permuted devices: every
  device's box, XLA's HLO text of both shardings, the collectives, received elements, data check.
- kind "hlo": sharding text with device lists in no iota order (random tile counts, permutations,
  last_tile_dim_replicate), read by XLA (HloSharding.from_string): its own printed text and every
  device's box (GSPMDSharding.devices_indices_map).
- kind "unreduced": a matmul on an Explicit mesh whose output is P(.., unreduced={..}): XLA's HLO
  text of the output sharding, every device's box, the groups of devices whose shards add up to
  the product, and whether they do (the output shards of the run).
"""
import json, os, random, re, subprocess, sys, time

OUT = os.path.join(os.path.dirname(__file__), "..", "dist", "cases.jsonl")
MESHES = [
    (4,), (3,), (6,), (8,), (2,),
    (2, 4), (4, 2), (2, 3), (3, 2), (2, 2), (1, 4),
    (2, 2, 2), (2, 1, 3), (1, 2, 4),
]
NAMES = ["a", "b", "c"]


def gen_cases(seed=22, per_mesh=24):
    rng = random.Random(seed)
    cases = []
    for mesh in MESHES:
        k = len(mesh)
        for _ in range(per_mesh):
            nd = rng.choice([2, 2, 3])
            even = rng.random() < 0.55
            if even:
                shape = [rng.choice([12, 24, 48, 8, 16]) for _ in range(nd)]
            else:
                shape = [rng.randint(1, 13) for _ in range(nd)]
            if nd == 3:
                shape = [max(1, s // 2) for s in shape]

            def place(allow_partial, allow_strided):
                ps = []
                for i in range(k):
                    r = rng.random()
                    if allow_partial and r < 0.15:
                        ps.append("Partial(sum)")
                    elif r < 0.5:
                        ps.append(f"Shard({rng.randrange(nd)})")
                    else:
                        ps.append("Replicate()")
                return ps

            src = place(rng.random() < 0.35, False)
            dst = place(rng.random() < 0.1, False)
            cases.append({"mesh": list(mesh), "shape": shape, "src": src, "dst": dst})
    # FSDP-over-TP sources: _StridedShard(d, split_factor = the later mesh dim) then Shard(d)
    # (sizes 12, 24, 48; bench/peers/gen_strided_vectors.py covers uneven and interleaved ones
    # against DTensor's own data).
    for mesh in [(2, 4), (4, 2), (2, 3), (3, 2), (2, 2), (2, 2, 2), (2, 1, 3)]:
        for _ in range(6):
            nd = rng.choice([2, 3])
            shape = [rng.choice([12, 24, 48]) for _ in range(nd)]
            d = rng.randrange(nd)
            src = ["Replicate()"] * len(mesh)
            src[-2] = f"_StridedShard({d}, split_factor={mesh[-1]})"
            src[-1] = f"Shard({d})"
            dst = ["Replicate()"] * len(mesh)
            for i in range(len(mesh)):
                if rng.random() < 0.6:
                    dst[i] = f"Shard({rng.randrange(nd)})"
            cases.append({"mesh": list(mesh), "shape": shape, "src": src, "dst": dst})
    return cases


def mesh_text(mesh):
    return ",".join(f"{NAMES[i]}={e}" for i, e in enumerate(mesh))


def torch_placement(t):
    from torch.distributed.tensor import Shard, Replicate, Partial
    from torch.distributed.tensor.placement_types import _StridedShard
    if t.startswith("_StridedShard("):
        d, f = t[len("_StridedShard("):-1].split(", split_factor=")
        return _StridedShard(int(d), split_factor=int(f))
    if t.startswith("Shard("):
        return Shard(int(t[6:-1]))
    if t.startswith("Partial"):
        return Partial("sum")
    return Replicate()


def placement_text(p):
    from torch.distributed.tensor import Shard, Replicate, Partial
    name = type(p).__name__
    if name == "_StridedShard":
        return f"_StridedShard({p.dim}, split_factor={p.split_factor})"
    if name == "Shard":
        return f"Shard({p.dim})"
    if name == "Replicate":
        return "Replicate()"
    if name in ("Partial", "_Partial", "_NormPartial"):
        return f"Partial({p.reduce_op})"
    return name


def transform_record(gen_transform_infos, src, dst):
    """DTensor's transform sequence from `src` to `dst` as `{"transforms": [[mesh dim, from,
    to], ..]}`, or its refusal as `{"error": ..}`."""
    try:
        return {"transforms": [
            [t.mesh_dim, placement_text(t.src_dst_placements[0]), placement_text(t.src_dst_placements[1])]
            for t in gen_transform_infos(src, dst)
        ]}
    except Exception as e:  # noqa: BLE001 - recorded as the peer's refusal
        return {"error": f"{type(e).__name__}: {e}"[:200]}


def run_torch(n, cases):
    import itertools
    import torch
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.tensor._dtensor_spec import DTensorSpec, TensorMeta
    from torch.distributed.tensor._redistribute import _gen_transform_infos
    from torch.distributed.tensor._utils import _compute_local_shape_and_global_offset

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=n)
    out = []
    for c in cases:
        mesh = c["mesh"]
        dm = DeviceMesh("cpu", torch.arange(n).reshape(mesh), mesh_dim_names=tuple(NAMES[: len(mesh)]))
        shape = c["shape"]
        meta = TensorMeta(torch.Size(shape), torch.empty(shape).stride(), torch.float32)
        sp = [torch_placement(p) for p in c["src"]]
        dp = [torch_placement(p) for p in c["dst"]]
        src = DTensorSpec(dm, tuple(sp), tensor_meta=meta)
        dst = DTensorSpec(dm, tuple(dp), tensor_meta=meta)
        rec = transform_record(_gen_transform_infos, src, dst)
        for key, ps in (("src_shards", sp), ("dst_shards", dp)):
            shards = []
            for coord in itertools.product(*[range(e) for e in mesh]):
                ls, off = _compute_local_shape_and_global_offset(shape, mesh, list(coord), ps)
                shards.append([list(ls), list(off)])
            rec[key] = shards
        out.append(rec)
    dist.destroy_process_group()
    return out


def spec_of(placements, nd, mesh):
    # DTensor Shard placements nest in mesh-dim order: JAX tuple in the same order (even cases).
    entries = [[] for _ in range(nd)]
    for i, p in enumerate(placements):
        if p.startswith("Shard("):
            entries[int(p[6:-1])].append(NAMES[i])
    for i, p in enumerate(placements):
        if p.startswith("_StridedShard("):  # cuts inside the later mesh dim: JAX minor
            entries[int(p[len("_StridedShard("):].split(",")[0])].append(NAMES[i])
    return entries


HLO_COLL = re.compile(
    r"= (\(.*?\)|\w+\[[\d,]*\]\S*) (all-gather|all-to-all|reduce-scatter|all-reduce|collective-permute)(?:-start)?\((.*?)\)(.*)$"
)


def elems(dims):
    n = 1
    for d in dims.split(","):
        if d:
            n *= int(d)
    return n


def group_size(attrs, n):
    # `mesh[..] {'a'}`, `mesh[..], device_ids=([2,4]T(1,0)) {'a'}`, sub-axis `{'a':(2)2}`.
    m = re.search(r"replica_groups=mesh\[([^\]]*)\](?:, device_ids=\(\S*\))? \{([^}]*)\}", attrs)
    if m:
        ext = {k.strip("'"): int(v) for k, v in (kv.split("=") for kv in m.group(1).split(","))}
        size = 1
        for a in m.group(2).split(","):
            name, _, sub = a.strip().partition(":")
            size *= int(sub.split(")")[1]) if sub else ext[name.strip("'")]
        return size
    m = re.search(r"replica_groups=\[(\d+),(\d+)\]", attrs)
    if m:
        return int(m.group(2))
    m = re.search(r"replica_groups=\{\{([\d,]*)\}", attrs)
    if m:
        return len(m.group(1).split(","))
    return n


def hlo_collectives(text, n):
    out = []
    defs = {}
    for line in text.splitlines():
        d = re.match(r"\s*(?:ROOT )?%([\w.\-]+) = (\(.*?\)|\w+\[[\d,]*\])", line)
        if d:
            defs[d.group(1)] = sum(elems(x) for x in re.findall(r"\w+\[([\d,]*)\]", d.group(2)))
    for line in text.splitlines():
        m = HLO_COLL.search(line)
        if not m:
            continue
        result, op, operands, attrs = m.groups()
        out_e = sum(elems(d) for d in re.findall(r"\w+\[([\d,]*)\]", result))
        in_e = sum(defs.get(nm, 0) for nm in re.findall(r"%([\w.\-]+)", operands)) or out_e
        p = group_size(attrs, n)
        if op == "all-gather":
            recv = out_e - in_e
        elif op == "all-to-all":
            recv = in_e * (p - 1) // p
        elif op == "reduce-scatter":
            recv = in_e * (p - 1) // p
        elif op == "all-reduce":
            recv = (2 * (p - 1) * out_e + p - 1) // p
        else:  # collective-permute: a device receives its buffer unless its pair is itself
            pairs = re.findall(r"\{(\d+),(\d+)\}", attrs.split("source_target_pairs=")[-1])
            recv = out_e if any(a != b for a, b in pairs) else 0
        out.append({"op": op, "in": in_e, "out": out_e, "group": p, "recv": recv})
    return out


def run_jax(cases):
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    import warnings
    import numpy as np
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    out = []
    for c in cases:
        rec = {}
        if any(p.startswith("Partial") for p in c["src"] + c["dst"]):
            out.append({"skipped": "partial"})
            continue
        mesh_shape, shape = c["mesh"], c["shape"]
        n = int(np.prod(mesh_shape))
        names = tuple(NAMES[: len(mesh_shape)])
        mesh = Mesh(np.array(jax.devices()[:n]).reshape(mesh_shape), names)
        s_spec = spec_of(c["src"], len(shape), mesh_shape)
        d_spec = spec_of(c["dst"], len(shape), mesh_shape)
        to_p = lambda sp: P(*[None if not e else (e[0] if len(e) == 1 else tuple(e)) for e in sp])
        rec["src_spec"], rec["dst_spec"] = s_spec, d_spec
        try:
            ss, ds = NamedSharding(mesh, to_p(s_spec)), NamedSharding(mesh, to_p(d_spec))
            boxes = lambda sh: [
                [[sl.start or 0, sl.stop if sl.stop is not None else shape[i]] for i, sl in enumerate(idx)]
                for _, idx in sorted(sh.devices_indices_map(tuple(shape)).items(), key=lambda kv: kv[0].id)
            ]
            rec["src_boxes"], rec["dst_boxes"] = boxes(ss), boxes(ds)
            x = jax.device_put(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape), ss)
            f = jax.jit(lambda v: v, out_shardings=ds)
            t0 = time.perf_counter()
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                comp = f.lower(x).compile()
            rec["compile_s"] = time.perf_counter() - t0
            rec["warned_remat"] = any("rematerialization" in str(m.message) for m in w)
            colls = hlo_collectives(comp.as_text(), n)
            rec["collectives"] = colls
            rec["recv_elems"] = sum(cl["recv"] for cl in colls)
            y = comp(x)
            full = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
            ok = True
            for s in y.addressable_shards:
                if not np.array_equal(np.asarray(s.data), full[s.index]):
                    ok = False
            rec["data_ok"] = ok
        except Exception as e:  # noqa: BLE001 - JAX refuses uneven shapes: recorded
            rec["error"] = f"{type(e).__name__}: {e}"[:160]
        out.append(rec)
    return out


PERMUTED = [
    ((4,), [2, 0, 3, 1]),
    ((2, 4), [0, 2, 4, 6, 1, 3, 5, 7]),
    ((4, 2), [7, 6, 5, 4, 3, 2, 1, 0]),
    ((2, 3), [5, 0, 3, 1, 4, 2]),
    ((2, 2, 2), [0, 4, 2, 6, 1, 5, 3, 7]),
    ((2, 2), [3, 1, 0, 2]),
]


def gen_more_cases(seed=2207):
    rng = random.Random(seed)
    cases = []
    for mesh, devices in PERMUTED:
        for _ in range(8):
            nd = rng.choice([2, 3])
            even = rng.random() < 0.6
            shape = [rng.choice([8, 16, 24]) if even else rng.randint(1, 11) for _ in range(nd)]

            def place(allow_partial):
                ps = []
                for _ in mesh:
                    r = rng.random()
                    if allow_partial and r < 0.15:
                        ps.append("Partial(sum)")
                    elif r < 0.6:
                        d = rng.randrange(nd)
                        ps.append(f"Shard({d - nd if rng.random() < 0.4 else d})")
                    else:
                        ps.append("Replicate()")
                return ps

            cases.append({"kind": "permuted", "mesh": list(mesh), "devices": devices, "shape": shape,
                          "src": place(rng.random() < 0.3), "dst": place(rng.random() < 0.1)})
    for n in [4, 6, 8, 8]:
        for _ in range(5):
            t0 = rng.choice([d for d in range(1, n + 1) if n % d == 0])
            rest = n // t0
            t1 = rng.choice([d for d in range(1, rest + 1) if rest % d == 0])
            rep = rest // t1
            tiles = [t0, t1] + ([rep] if rep > 1 else [])
            if rep == 1 and t0 * t1 != n:
                continue
            devs = list(range(n))
            rng.shuffle(devs)
            text = "{devices=[%s]%s%s}" % (",".join(map(str, tiles)), ",".join(map(str, devs)),
                                           " last_tile_dim_replicate" if rep > 1 else "")
            shape = [t0 * rng.choice([1, 2, 3]), t1 * rng.choice([1, 2, 3])]
            named = {4: "a=2,b=2", 6: "a=2,b=3", 8: "a=2,b=4"}[n]
            cases.append({"kind": "hlo", "n": n, "named_mesh": named, "text": text, "shape": shape})
    for mesh in [(2, 4), (2, 2, 2)]:
        names = NAMES[: len(mesh)]
        for _ in range(5):
            axes = names[:]
            rng.shuffle(axes)
            k = rng.randint(1, len(axes) - 1) if rng.random() < 0.8 else len(axes)
            unreduced, free = sorted(axes[:k]), axes[k:]
            row = free[0] if free and rng.random() < 0.6 else None
            col = free[-1] if free and free[-1] != row and rng.random() < 0.5 else None
            cases.append({"kind": "unreduced", "mesh": list(mesh), "row": row, "col": col,
                          "unreduced": unreduced})
    return cases


def run_torch_more(n, cases):
    import torch
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.tensor import Replicate, distribute_tensor
    from torch.distributed.tensor._dtensor_spec import DTensorSpec, TensorMeta
    from torch.distributed.tensor._redistribute import _gen_transform_infos
    from torch.distributed.tensor._utils import _compute_local_shape_and_global_offset

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=n)
    out = []
    for c in cases:
        mesh, shape = c["mesh"], c["shape"]
        dm = DeviceMesh("cpu", torch.tensor(c["devices"]).reshape(mesh), mesh_dim_names=tuple(NAMES[: len(mesh)]))
        meta = TensorMeta(torch.Size(shape), torch.empty(shape).stride(), torch.float32)

        def normalized(texts):
            ps = [torch_placement(p) for p in texts]
            # distribute_tensor normalizes negative Shard dims (Partial is not distributable:
            # it is put back after).
            plain = [Replicate() if p.is_partial() else p for p in ps]
            got = list(distribute_tensor(torch.empty(shape), dm, plain).placements)
            return [p if p.is_partial() else g for p, g in zip(ps, got)]

        rec = {}
        sp, dp = normalized(c["src"]), normalized(c["dst"])
        rec["src_placements"] = [placement_text(p) for p in sp]
        rec["dst_placements"] = [placement_text(p) for p in dp]
        rec.update(transform_record(_gen_transform_infos, DTensorSpec(dm, tuple(sp), tensor_meta=meta),
                                    DTensorSpec(dm, tuple(dp), tensor_meta=meta)))
        for key, ps in (("src_shards", sp), ("dst_shards", dp)):
            shards = []
            for r in range(n):
                coord = (dm.mesh == r).nonzero().tolist()[0]  # DeviceMesh's own rule
                ls, off = _compute_local_shape_and_global_offset(shape, mesh, coord, ps)
                shards.append([list(ls), list(off)])
            rec[key] = shards
        out.append(rec)
    dist.destroy_process_group()
    return out


def run_jax_more(cases, torch_recs):
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    import warnings
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P, AxisType
    from jax._src.sharding_impls import GSPMDSharding
    from jax._src.lib import xla_client as xc

    devs = np.array(jax.devices())
    box_of = lambda idx, shape: [[sl.start or 0, sl.stop if sl.stop is not None else shape[i]] for i, sl in enumerate(idx)]
    out = []
    for c, t in zip(cases, torch_recs):
        rec = {}
        if c["kind"] == "permuted":
            placements = t["src_placements"] + t["dst_placements"]
            if any(p.startswith("Partial") for p in placements) or "transforms" not in t:
                out.append({"skipped": "partial"})
                continue
            mesh_shape, shape = c["mesh"], c["shape"]
            mesh = Mesh(devs[c["devices"]].reshape(mesh_shape), tuple(NAMES[: len(mesh_shape)]))
            to_p = lambda sp: P(*[None if not e else (e[0] if len(e) == 1 else tuple(e)) for e in sp])
            s_spec = spec_of(t["src_placements"], len(shape), mesh_shape)
            d_spec = spec_of(t["dst_placements"], len(shape), mesh_shape)
            try:
                ss, ds = NamedSharding(mesh, to_p(s_spec)), NamedSharding(mesh, to_p(d_spec))
                boxes = lambda sh: [box_of(idx, shape) for _, idx in
                                    sorted(sh.devices_indices_map(tuple(shape)).items(), key=lambda kv: kv[0].id)]
                rec["src_boxes"], rec["dst_boxes"] = boxes(ss), boxes(ds)
                rec["src_hlo"] = str(ss._to_xla_hlo_sharding(len(shape)))
                rec["dst_hlo"] = str(ds._to_xla_hlo_sharding(len(shape)))
                full = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
                x = jax.device_put(full, ss)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    comp = jax.jit(lambda v: v, out_shardings=ds).lower(x).compile()
                colls = hlo_collectives(comp.as_text(), len(c["devices"]))
                rec["recv_elems"] = sum(cl["recv"] for cl in colls)
                y = comp(x)
                rec["data_ok"] = all(np.array_equal(np.asarray(s.data), full[s.index]) for s in y.addressable_shards)
            except Exception as e:  # noqa: BLE001 - JAX refuses uneven shapes: recorded
                rec["error"] = f"{type(e).__name__}: {e}"[:160]
        elif c["kind"] == "hlo":
            hs = xc.HloSharding.from_string(c["text"])
            sh = GSPMDSharding(tuple(jax.devices()[: c["n"]]), hs)
            rec["xla_text"] = str(hs)
            rec["boxes"] = [box_of(idx, c["shape"]) for _, idx in
                            sorted(sh.devices_indices_map(tuple(c["shape"])).items(), key=lambda kv: kv[0].id)]
        else:
            mesh_shape = c["mesh"]
            names = tuple(NAMES[: len(mesh_shape)])
            n = int(np.prod(mesh_shape))
            mesh = Mesh(devs[:n].reshape(mesh_shape), names, axis_types=(AxisType.Explicit,) * len(names))
            ext = dict(zip(names, mesh_shape))
            u = tuple(c["unreduced"])
            k = int(np.prod([ext[a] for a in u])) * 3
            m_rows = (ext[c["row"]] if c["row"] else 1) * 2
            n_cols = (ext[c["col"]] if c["col"] else 1) * 3
            x = np.arange(m_rows * k, dtype=np.float32).reshape(m_rows, k) % 7
            y = np.arange(k * n_cols, dtype=np.float32).reshape(k, n_cols) % 5
            shape = [m_rows, n_cols]
            with jax.set_mesh(mesh):
                xs = jax.device_put(x, NamedSharding(mesh, P(None, u)))
                ys = jax.device_put(y, NamedSharding(mesh, P(u, None)))
                out_spec = P(c["row"], c["col"], unreduced=set(u))
                z = jax.jit(lambda a, b: jnp.dot(a, b, out_sharding=out_spec))(xs, ys)
                rec["hlo"] = str(z.sharding._to_xla_hlo_sharding(2))
                plain = NamedSharding(mesh, P(c["row"], c["col"]))
                idx = plain.devices_indices_map(tuple(shape))
                rec["boxes"] = [box_of(idx[d], shape) for d in sorted(idx, key=lambda d: d.id)]
                data = {d.id: np.asarray(z.addressable_data(i)) for i, d in enumerate(z.sharding._device_assignment)}
            coords = {int(d.id): dict(zip(names, pos)) for pos, d in np.ndenumerate(mesh.devices)}
            groups = {}
            for dev, cd in coords.items():
                groups.setdefault(tuple(cd[a] for a in names if a not in u), []).append(dev)
            rec["groups"] = sorted(sorted(g) for g in groups.values())
            want = x @ y
            ok = True
            for g in rec["groups"]:
                b = rec["boxes"][g[0]]
                total = sum(data[d] for d in g)
                ok &= bool(np.allclose(total, want[b[0][0]:b[0][1], b[1][0]:b[1][1]]))
                ok &= all(rec["boxes"][d] == b for d in g)
            rec["shape"], rec["sum_ok"] = shape, ok
        out.append(rec)
    return out


def main_more():
    cases = gen_more_cases()
    torch_recs = [None] * len(cases)
    for n in sorted({len(c["devices"]) for c in cases if c["kind"] == "permuted"}):
        idx = [i for i, c in enumerate(cases) if c["kind"] == "permuted" and len(c["devices"]) == n]
        r = subprocess.run([sys.executable, __file__, "--torch-more", str(n)], capture_output=True, text=True, check=True)
        for i, rec in zip(idx, json.loads(r.stdout.strip().splitlines()[-1])):
            torch_recs[i] = rec
    r = subprocess.run([sys.executable, __file__, "--jax-more", json.dumps(torch_recs)], capture_output=True,
                       text=True, check=True)
    jax_recs = json.loads(r.stdout.strip().splitlines()[-1])
    out = os.path.join(os.path.dirname(__file__), "..", "dist", "cases_more.jsonl")
    with open(out, "w") as f:
        for i, (c, t, j) in enumerate(zip(cases, torch_recs, jax_recs)):
            rec = {"id": i, "kind": c["kind"]}
            if c["kind"] == "permuted":
                rec.update({"mesh": mesh_text(c["mesh"]) + " devices=[" + ",".join(map(str, c["devices"])) + "]",
                            "shape": c["shape"], "src": "[" + ", ".join(c["src"]) + "]",
                            "dst": "[" + ", ".join(c["dst"]) + "]", "dtensor": t, "jax": j})
            elif c["kind"] == "hlo":
                rec.update({"n": c["n"], "named_mesh": c["named_mesh"], "text": c["text"], "shape": c["shape"], "xla": j})
            else:
                rec.update({"mesh": mesh_text(c["mesh"]), "unreduced": c["unreduced"], "jax": j})
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    print(f"wrote {len(cases)} cases to {out}")


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--more":
        main_more()
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--torch-more":
        n = int(sys.argv[2])
        cases = [c for c in gen_more_cases() if c["kind"] == "permuted" and len(c["devices"]) == n]
        print(json.dumps(run_torch_more(n, cases)))
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--jax-more":
        cases = gen_more_cases()
        torch_recs = json.loads(sys.argv[2])
        print(json.dumps(run_jax_more(cases, [t or {} for t in torch_recs])))
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--torch":
        n = int(sys.argv[2])
        cases = [c for c in gen_cases() if eval("*".join(map(str, c["mesh"]))) == n]
        print(json.dumps(run_torch(n, cases)))
        return
    if len(sys.argv) == 2 and sys.argv[1] == "--jax":
        print(json.dumps(run_jax(gen_cases())))
        return
    cases = gen_cases()
    sizes = sorted({eval("*".join(map(str, c["mesh"]))) for c in cases})
    torch_recs = {}
    for n in sizes:
        r = subprocess.run([sys.executable, __file__, "--torch", str(n)], capture_output=True, text=True, check=True)
        torch_recs[n] = iter(json.loads(r.stdout.strip().splitlines()[-1]))
    r = subprocess.run([sys.executable, __file__, "--jax"], capture_output=True, text=True, check=True)
    jax_recs = json.loads(r.stdout.strip().splitlines()[-1])
    with open(OUT, "w") as f:
        for i, c in enumerate(cases):
            n = eval("*".join(map(str, c["mesh"])))
            rec = {"id": i, "mesh": mesh_text(c["mesh"]), "shape": c["shape"], "src": "[" + ", ".join(c["src"]) + "]",
                   "dst": "[" + ", ".join(c["dst"]) + "]", "dtensor": next(torch_recs[n]), "jax": jax_recs[i]}
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
