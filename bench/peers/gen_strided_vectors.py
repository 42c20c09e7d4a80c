"""Generates the `_StridedShard` oracle cases (bench/dist/strided.jsonl) from PyTorch DTensor run
on gloo CPU processes (torch 2.15; about a minute on 2 cores). Run:
    python3 bench/peers/gen_strided_vectors.py [SEED]

Each case: a mesh (1-D to 3-D, extents 2, 3, 4), a 1-D to 3-D shape (mostly uneven: sizes that the
mesh does not divide), a source with one `_StridedShard(d, split_factor=f)` (f the product of the
later mesh dims that shard d, FSDP over TP's form, or a free f of 2 or 3) and a target of
Shard/Replicate/_StridedShard. The global tensor is `arange(numel)` in float64, so every local
value names its element. Per case and per rank (DTensor's data, not its shape rule):
- `src`: the local tensor `distribute_tensor(t, mesh, src, src_data_rank=None)` gives (DTensor's
  own local split, `_split_tensor` per mesh dim left to right), flattened, and its shape;
- `src_via`: the same placement reached by `redistribute` from Replicate (DTensor's path into a
  `_StridedShard`), or its error;
- `dst`: the target's local tensor by the same local split;
- `run`: `redistribute(src -> dst)` of the source DTensor, or its error;
- `transforms`: `_gen_transform_infos`'s steps for the pair.
DTensor refuses uneven `_StridedShard` in `distribute_tensor` with a scatter (an AssertionError
in `_shard_tensor`: its pieces are not padded), hence `src_data_rank=None`.
"""
import json, os, random, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_dist_vectors import placement_text, torch_placement  # noqa: E402 - the shared readers

OUT = os.path.join(os.path.dirname(__file__), "..", "dist", "strided.jsonl")
NAMES = ["a", "b", "c"]
MESHES = [(2,), (3,), (4,), (2, 2), (2, 4), (4, 2), (2, 3), (3, 2), (2, 2, 2), (2, 1, 3)]


def gen_cases(seed, per_mesh=16):
    rng = random.Random(seed)
    cases = []
    for mesh in MESHES:
        k = len(mesh)
        for _ in range(per_mesh):
            nd = rng.choice([1, 2, 2, 3])
            shape = [rng.randint(1, 29 if nd < 3 else 11) for _ in range(nd)]
            d = rng.randrange(nd)
            i = rng.randrange(k)
            src = ["Replicate()"] * k
            later = [j for j in range(i + 1, k) if rng.random() < 0.7]
            for j in later:
                src[j] = f"Shard({d})"
            f = 1
            for j in later:
                f *= mesh[j]
            if f == 1 or rng.random() < 0.25:
                f = rng.choice([2, 3])
            src[i] = f"_StridedShard({d}, split_factor={f})"
            for j in range(k):
                if src[j] == "Replicate()" and rng.random() < 0.3:
                    src[j] = f"Shard({rng.randrange(nd)})"
            dst = ["Replicate()"] * k
            for j in range(k):
                r = rng.random()
                if r < 0.5:
                    dst[j] = f"Shard({rng.randrange(nd)})"
            if rng.random() < 0.15:
                j = rng.randrange(k)
                dst[j] = f"_StridedShard({rng.randrange(nd)}, split_factor={rng.choice([2, 3])})"
            cases.append({"mesh": list(mesh), "shape": shape, "src": src, "dst": dst})
    return cases


def err(e):
    return f"{type(e).__name__}: {e}"[:160]


def worker(rank, n, store, cases, start, outdir):
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import distribute_tensor, Replicate
    from torch.distributed.tensor._redistribute import _gen_transform_infos

    torch.set_num_threads(1)
    import datetime
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=n,
                            timeout=datetime.timedelta(seconds=20))
    meshes = {}
    done = open(os.path.join(outdir, f"rank{rank}.jsonl"), "a")
    import faulthandler
    for c in cases[start:]:
        # A rank left waiting in a collective another rank skipped (it raised first) never
        # returns: after 30 s faulthandler's watchdog thread exits the process (exit code 1)
        # and the case is recorded as aborted.
        faulthandler.dump_traceback_later(30, exit=True, file=open(os.devnull, "w"))
        key = tuple(c["mesh"])
        if key not in meshes:
            meshes[key] = init_device_mesh("cpu", key, mesh_dim_names=tuple(NAMES[: len(key)]))
        mesh = meshes[key]
        t = torch.arange(int(torch.tensor(c["shape"]).prod())).reshape(c["shape"]).double()
        sp = [torch_placement(p) for p in c["src"]]
        dp = [torch_placement(p) for p in c["dst"]]
        rec = {}

        def local(x):
            return {"shape": list(x.shape), "values": [int(v) for v in x.flatten().tolist()]}

        try:
            src = distribute_tensor(t, mesh, sp, src_data_rank=None)
            rec["src"] = local(src.to_local())
        except Exception as e:  # noqa: BLE001 - the peer's refusal is recorded
            src = None
            rec["src"] = {"error": err(e)}
        try:
            rec["dst"] = local(distribute_tensor(t, mesh, dp, src_data_rank=None).to_local())
        except Exception as e:  # noqa: BLE001
            rec["dst"] = {"error": err(e)}
        try:
            rep = distribute_tensor(t, mesh, [Replicate()] * len(sp))
            rec["src_via"] = local(rep.redistribute(mesh, sp).to_local())
        except Exception as e:  # noqa: BLE001
            rec["src_via"] = {"error": err(e)}
        if src is not None:
            try:
                rec["run"] = local(src.redistribute(mesh, dp).to_local())
            except Exception as e:  # noqa: BLE001
                rec["run"] = {"error": err(e)}
            if rank == 0:
                try:
                    rec["transforms"] = [
                        [x.mesh_dim, placement_text(x.src_dst_placements[0]),
                         placement_text(x.src_dst_placements[1])]
                        for x in _gen_transform_infos(src._spec, src._spec.__class__(
                            mesh, tuple(dp), tensor_meta=src._spec.tensor_meta))
                    ]
                except Exception as e:  # noqa: BLE001
                    rec["transforms"] = {"error": err(e)}
        faulthandler.cancel_dump_traceback_later()
        done.write(json.dumps(rec) + "\n")
        done.flush()
    done.close()
    dist.barrier()
    dist.destroy_process_group()


def run_world(n, cases):
    """Every rank's record per case. A case during which the process group dies (a rank
    aborts on a collective whose sizes disagree, or one rank waits past the 20 s timeout for
    a collective another skipped) is recorded as `{"aborted": ..}` on every rank, and the
    remaining cases run in a fresh group."""
    import torch.multiprocessing as mp
    ranks = [[] for _ in range(n)]
    start = 0
    while start < len(cases):
        with tempfile.TemporaryDirectory() as tmp:
            store = os.path.join(tmp, "store")
            failure = None
            try:
                mp.spawn(worker, args=(n, store, cases, start, tmp), nprocs=n)
            except Exception as e:  # noqa: BLE001 - the group died inside a case
                failure = err(e).splitlines()[0]
                if "exit code 1" in failure:
                    failure = "a rank waited 30 s in a collective (another rank left it)"
                elif "SIGABRT" in failure:
                    failure = "gloo aborted: a collective's sizes differ between ranks"
            got = []
            for r in range(n):
                path = os.path.join(tmp, f"rank{r}.jsonl")
                lines = open(path).read().splitlines() if os.path.exists(path) else []
                got.append([json.loads(x) for x in lines])
        k = min(len(g) for g in got)
        for r in range(n):
            ranks[r].extend(got[r][:k])
        start += k
        if failure is not None and start < len(cases):
            # The case the group died in: what each rank that finished it recorded.
            for r in range(n):
                rec = got[r][k] if len(got[r]) > k else {}
                rec["aborted"] = failure
                ranks[r].append(rec)
            start += 1
    return ranks


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 2215
    cases = gen_cases(seed)
    by_world = {}
    for c in cases:
        n = 1
        for e in c["mesh"]:
            n *= e
        by_world.setdefault(n, []).append(c)
    lines = []
    for n, cs in sorted(by_world.items()):
        ranks = run_world(n, cs)
        for i, c in enumerate(cs):
            rec = dict(c)
            rec["mesh"] = ",".join(f"{NAMES[j]}={e}" for j, e in enumerate(c["mesh"]))
            rec["src"] = "[" + ", ".join(c["src"]) + "]"
            rec["dst"] = "[" + ", ".join(c["dst"]) + "]"
            rec["transforms"] = ranks[0][i].get("transforms")
            if any("aborted" in ranks[r][i] for r in range(n)):
                rec["aborted"] = next(ranks[r][i]["aborted"] for r in range(n) if "aborted" in ranks[r][i])
                rec["aborted_ranks"] = [r for r in range(n) if set(ranks[r][i]) <= {"aborted"}]
            for key in ("src", "src_via", "dst", "run"):
                rec[key + "_ranks"] = [ranks[r][i].get(key) for r in range(n)]
            lines.append(rec)
    for i, rec in enumerate(lines):
        rec["id"] = i
    with open(OUT, "w") as f:
        for rec in lines:
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    print(f"{len(lines)} cases -> {OUT}")


if __name__ == "__main__":
    main()
