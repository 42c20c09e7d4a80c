// laycert NCCL program: 3 steps over 4 ranks (4-byte elements in the plan; doubles here).
// Build: nvcc -O2 -std=c++17 -o plan plan.cu -ldl
// Run on one GPU (every rank emulated, pack/unpack kernels on the GPU, NCCL at one rank):
//   LAYCERT_EMULATE=1 ./plan
// Run on n GPUs, one process per rank:
//   LAYCERT_RANK=r LAYCERT_WORLD=n LAYCERT_ID_FILE=/tmp/laycert.id ./plan
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <map>
#include <utility>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(3); } } while (0)

// NCCL's stable C ABI, declared here so nothing links against it (loaded with dlopen).
typedef struct { char internal[128]; } ncclUniqueId;
typedef struct ncclComm* ncclComm_t;
typedef int ncclResult_t;
enum { ncclDouble = 8 };
typedef ncclResult_t (*GetUniqueId_t)(ncclUniqueId*);
typedef ncclResult_t (*CommInitRank_t)(ncclComm_t*, int, ncclUniqueId, int);
typedef ncclResult_t (*CommSplit_t)(ncclComm_t, int, int, ncclComm_t*, void*);
typedef ncclResult_t (*AllGather_t)(const void*, void*, size_t, int, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*ReduceScatter_t)(const void*, void*, size_t, int, int, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*AllReduce_t)(const void*, void*, size_t, int, int, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*Broadcast_t)(const void*, void*, size_t, int, int, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*Send_t)(const void*, size_t, int, int, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*Recv_t)(void*, size_t, int, int, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*Group_t)(void);
struct Nccl {
  GetUniqueId_t getUniqueId; CommInitRank_t commInitRank; CommSplit_t commSplit;
  AllGather_t allGather; ReduceScatter_t reduceScatter; AllReduce_t allReduce; Broadcast_t broadcast;
  Send_t send; Recv_t recv; Group_t groupStart; Group_t groupEnd;
};
static Nccl nccl;
static void* sym(void* h, const char* n) {
  void* p = dlsym(h, n);
  if (!p) { fprintf(stderr, "NCCL symbol %s missing\n", n); exit(3); }
  return p;
}
static void load_nccl() {
  setenv("NCCL_NVLS_ENABLE", "0", 1);  // no NVLink multicast anywhere
  void* h = dlopen("libnccl.so.2", RTLD_NOW);
  if (!h) h = dlopen("libnccl.so", RTLD_NOW);
  if (!h) { fprintf(stderr, "cannot dlopen libnccl.so.2: %s\n", dlerror()); exit(3); }
  nccl.getUniqueId = (GetUniqueId_t)sym(h, "ncclGetUniqueId");
  nccl.commInitRank = (CommInitRank_t)sym(h, "ncclCommInitRank");
  nccl.commSplit = (CommSplit_t)sym(h, "ncclCommSplit");
  nccl.allGather = (AllGather_t)sym(h, "ncclAllGather");
  nccl.reduceScatter = (ReduceScatter_t)sym(h, "ncclReduceScatter");
  nccl.allReduce = (AllReduce_t)sym(h, "ncclAllReduce");
  nccl.broadcast = (Broadcast_t)sym(h, "ncclBroadcast");
  nccl.send = (Send_t)sym(h, "ncclSend");
  nccl.recv = (Recv_t)sym(h, "ncclRecv");
  nccl.groupStart = (Group_t)sym(h, "ncclGroupStart");
  nccl.groupEnd = (Group_t)sym(h, "ncclGroupEnd");
}
#define NK(x) do { ncclResult_t r_ = (x); if (r_ != 0) { fprintf(stderr, "NCCL error %d at %d\n", r_, __LINE__); exit(3); } } while (0)

// The NCCL program's kernels (codegen/src/nccl_kernels.cu): emitted into every `laycert dist gen`
// program and compiled by NVRTC for `laycert dist run` (codegen::nccl_run).
struct D8 { long long v[8]; };

// out[i] = in[sum_d map_d[i_d] * in_stride_d], 0 where any map entry is -1.
__global__ void laycert_local(double* out, const double* in, long long n, int nd, D8 shape, D8 in_stride,
                              const long long* maps, D8 map_off) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  long long rest = i, off = 0; bool pad = false;
  for (int d = nd - 1; d >= 0; --d) {
    long long c = rest % shape.v[d]; rest /= shape.v[d];
    long long o = maps[map_off.v[d] + c];
    if (o < 0) pad = true; else off += o * in_stride.v[d];
  }
  out[i] = pad ? 0.0 : in[off];
}

// dst[dst_start + c] = src[src_start + c] for every c in the box len.
__global__ void laycert_box(double* dst, const double* src, long long n, int nd, D8 len, D8 src_stride,
                            D8 src_start, D8 dst_stride, D8 dst_start) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  long long rest = i, so = 0, dof = 0;
  for (int d = nd - 1; d >= 0; --d) {
    long long c = rest % len.v[d]; rest /= len.v[d];
    so += (src_start.v[d] + c) * src_stride.v[d];
    dof += (dst_start.v[d] + c) * dst_stride.v[d];
  }
  dst[dof] = src[so];
}

// acc = op(acc, x) elementwise (0 sum/avg, 2 max, 3 min); emulation of NCCL reductions.
__global__ void laycert_reduce(double* acc, const double* x, long long n, int op) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  acc[i] = op == 2 ? fmax(acc[i], x[i]) : op == 3 ? fmin(acc[i], x[i]) : acc[i] + x[i];
}
static const long long LAYCERT_PLAN[] = {
  4LL,3LL,7LL,2LL,7LL,8LL,0LL,1LL,2LL,3LL,4LL,5LL,6LL,0LL,1LL,2LL,
  3LL,4LL,5LL,6LL,-1LL,0LL,1LL,2LL,3LL,4LL,5LL,6LL,0LL,1LL,2LL,3LL,
  4LL,5LL,6LL,-1LL,0LL,1LL,2LL,3LL,4LL,5LL,6LL,0LL,1LL,2LL,3LL,4LL,
  5LL,6LL,-1LL,0LL,1LL,2LL,3LL,4LL,5LL,6LL,0LL,1LL,2LL,3LL,4LL,5LL,
  6LL,-1LL,2LL,2LL,2LL,0LL,2LL,2LL,1LL,3LL,1LL,0LL,6LL,2LL,7LL,4LL,
  4LL,0LL,0LL,0LL,0LL,0LL,0LL,7LL,4LL,2LL,1LL,0LL,0LL,0LL,0LL,7LL,
  3LL,1LL,2LL,0LL,0LL,0LL,0LL,6LL,4LL,3LL,3LL,0LL,0LL,0LL,0LL,6LL,
  3LL,
};
static const long long LAYCERT_SOURCE[] = {
  2LL,13LL,7LL,7LL,7LL,2LL,1LL,1LL,0LL,1LL,0LL,7LL,0LL,7LL,0LL,0LL,
  1LL,1LL,7LL,13LL,0LL,7LL,0LL,0LL,0LL,1LL,0LL,7LL,0LL,7LL,0LL,0LL,
  1LL,1LL,7LL,13LL,0LL,7LL,0LL,0LL,
};
static const long long LAYCERT_TARGET[] = {
  2LL,13LL,7LL,7LL,4LL,1LL,0LL,0LL,0LL,1LL,0LL,7LL,0LL,4LL,0LL,0LL,
  1LL,1LL,0LL,7LL,4LL,7LL,0LL,0LL,2LL,1LL,7LL,13LL,0LL,4LL,0LL,0LL,
  3LL,1LL,7LL,13LL,4LL,7LL,0LL,0LL,
};

typedef std::vector<long long> Shape;
struct Buf { Shape shape; double* p; };
static long long numel(const Shape& s) { long long n = 1; for (long long e : s) n *= e; return n; }
static D8 strides(const Shape& s) { D8 r; long long a = 1; for (int d = (int)s.size() - 1; d >= 0; --d) { r.v[d] = a; a *= s[d]; } return r; }
static D8 d8(const long long* v, int nd) { D8 r; for (int d = 0; d < 8; ++d) r.v[d] = d < nd ? v[d] : 0; return r; }
static D8 d8s(const Shape& s) { return d8(s.data(), (int)s.size()); }
static unsigned blocks(long long n) { return (unsigned)((n + 255) / 256); }
static Buf alloc(const Shape& s) { Buf b; b.shape = s; CK(cudaMalloc(&b.p, sizeof(double) * (numel(s) > 0 ? numel(s) : 1))); CK(cudaMemset(b.p, 0, sizeof(double) * (numel(s) > 0 ? numel(s) : 1))); return b; }
// Copies the box `len` at `from` of src into dst at `at`.
static void box(Buf& dst, const Buf& src, const Shape& len, const Shape& from, const Shape& at) {
  long long n = numel(len); if (n == 0) return;
  int nd = (int)len.size();
  laycert_box<<<blocks(n), 256>>>(dst.p, src.p, n, nd, d8s(len), strides(src.shape), d8s(from), strides(dst.shape), d8s(at));
  CK(cudaGetLastError());
}
static Shape zeros(size_t nd) { return Shape(nd, 0); }

struct Reader { const long long* w; size_t i; long long next() { return w[i++]; } };
static std::vector<std::vector<int>> read_groups(Reader& r) {
  std::vector<std::vector<int>> gs((size_t)r.next());
  for (auto& g : gs) { g.resize((size_t)r.next()); for (auto& x : g) x = (int)r.next(); }
  return gs;
}
static int find_group(const std::vector<std::vector<int>>& gs, int rank, int* pos) {
  for (size_t k = 0; k < gs.size(); ++k) for (size_t i = 0; i < gs[k].size(); ++i) if (gs[k][i] == rank) { *pos = (int)i; return (int)k; }
  *pos = 0; return -1;
}

struct Layout { int nd; Shape shape, local; long long mult, partial, sum; std::vector<long long> group, pieces; std::vector<size_t> at; };
// Per rank: its group (mesh position with the partial coordinates zeroed), its piece count,
// then per piece `lo, hi` per dim and its local corner per dim.
static Layout read_layout(const long long* w, int ranks) {
  Layout l; size_t i = 0; l.nd = (int)w[i++];
  for (int d = 0; d < l.nd; ++d) l.shape.push_back(w[i++]);
  for (int d = 0; d < l.nd; ++d) l.local.push_back(w[i++]);
  l.mult = w[i++]; l.partial = w[i++]; l.sum = w[i++];
  for (int r = 0; r < ranks; ++r) {
    l.group.push_back(w[i++]);
    l.at.push_back(l.pieces.size());
    long long np = w[i++]; l.pieces.push_back(np);
    for (long long k = 0; k < 3 * l.nd * np; ++k) l.pieces.push_back(w[i++]);
  }
  return l;
}
// Visits the places of `rank`'s pieces: (local flat index, global flat element id).
template <class F> static void each_place(const Layout& l, int rank, F f) {
  const long long* p = &l.pieces[l.at[rank]];
  long long np = *p++;
  for (long long q = 0; q < np; ++q, p += 3 * l.nd) {
    const long long* b = p; const long long* o = p + 2 * l.nd;
    long long n = 1; for (int d = 0; d < l.nd; ++d) { long long e = b[2 * d + 1] - b[2 * d]; if (e <= 0) n = 0; n *= e; }
    for (long long k = 0; k < n; ++k) {
      long long rest = k, loc = 0, glob = 0, ls = 1, gs = 1;
      for (int d = l.nd - 1; d >= 0; --d) {
        long long e = b[2 * d + 1] - b[2 * d], c = rest % e; rest /= e;
        loc += (o[d] + c) * ls; glob += (b[2 * d] + c) * gs; ls *= l.local[d]; gs *= l.shape[d];
      }
      f(loc, glob);
    }
  }
}

// Runs the plan on the ranks in `mine` (all of them when emulating, else this process's rank).
int main() {
  const long long* W = LAYCERT_PLAN;
  const int ranks = (int)W[0];
  const bool emulate = getenv("LAYCERT_EMULATE") != nullptr;
  int me = getenv("LAYCERT_RANK") ? atoi(getenv("LAYCERT_RANK")) : 0;
  int world = getenv("LAYCERT_WORLD") ? atoi(getenv("LAYCERT_WORLD")) : 1;
  load_nccl();
  ncclComm_t comm = nullptr;
  if (!emulate) {
    if (world != ranks) { fprintf(stderr, "the plan is for %d ranks; LAYCERT_WORLD=%d\n", ranks, world); return 2; }
    int ndev = 0; CK(cudaGetDeviceCount(&ndev)); CK(cudaSetDevice(me % (ndev > 0 ? ndev : 1)));
    ncclUniqueId id; const char* path = getenv("LAYCERT_ID_FILE") ? getenv("LAYCERT_ID_FILE") : "/tmp/laycert_nccl.id";
    if (me == 0) { NK(nccl.getUniqueId(&id)); FILE* f = fopen(path, "wb"); fwrite(&id, sizeof id, 1, f); fclose(f); }
    else { FILE* f = nullptr; while (!(f = fopen(path, "rb"))) usleep(10000); usleep(50000); if (fread(&id, sizeof id, 1, f) != 1) return 3; fclose(f); }
    NK(nccl.commInitRank(&comm, ranks, id, me));
  } else {
    // NCCL at one rank on this GPU: an all-reduce of one buffer must leave it unchanged.
    ncclUniqueId id; NK(nccl.getUniqueId(&id)); NK(nccl.commInitRank(&comm, 1, id, 0));
    Buf t = alloc(Shape{4}); double h[4] = {1, 2, 3, 4}; CK(cudaMemcpy(t.p, h, sizeof h, cudaMemcpyHostToDevice));
    NK(nccl.allReduce(t.p, t.p, 4, ncclDouble, 0, comm, 0)); CK(cudaMemcpy(h, t.p, sizeof h, cudaMemcpyDeviceToHost));
    if (h[0] != 1 || h[3] != 4) { fprintf(stderr, "one-rank NCCL all-reduce changed the data\n"); return 1; }
    printf("nccl: one-rank all-reduce ok (NCCL_NVLS_ENABLE=%s)\n", getenv("NCCL_NVLS_ENABLE"));
  }
  std::vector<int> mine; if (emulate) for (int r = 0; r < ranks; ++r) mine.push_back(r); else mine.push_back(me);
  Layout src = read_layout(LAYCERT_SOURCE, ranks), dst = read_layout(LAYCERT_TARGET, ranks);
  std::vector<Buf> buf(ranks);
  for (int r : mine) {
    buf[r] = alloc(src.local);
    std::vector<double> h((size_t)numel(src.local), 0.0);
    each_place(src, r, [&](long long loc, long long g) { h[(size_t)loc] = (double)(g + 1); });
    CK(cudaMemcpy(buf[r].p, h.data(), sizeof(double) * h.size(), cudaMemcpyHostToDevice));
  }
  Reader rd{W, 2};
  const long long nsteps = W[1];
  for (long long s = 0; s < nsteps; ++s) {
    long long op = rd.next();
    if (op == 1 || op == 2 || op == 3 || op == 4 || op == 5) {
      auto gs = read_groups(rd);
      long long a = rd.next(), b = (op == 2 || op == 4) ? rd.next() : 0;
      ncclComm_t sub = nullptr; int pos = 0;
      if (!emulate) { int k = find_group(gs, me, &pos); NK(nccl.commSplit(comm, k, pos, &sub, nullptr)); }
      for (auto& g : gs) {
        int p = (int)g.size();
        bool local = false; for (int r : g) for (int m : mine) local |= (r == m);
        if (!local) continue;
        Shape sh = buf[emulate ? g[0] : me].shape; size_t nd = sh.size(); long long n = numel(sh);
        std::vector<Buf> next(p);
        if (op == 1) {  // all-gather along dim a
          Shape ns = sh; ns[a] *= p;
          Buf tmp = alloc(Shape{(long long)p * n});
          if (emulate) for (int m = 0; m < p; ++m) CK(cudaMemcpy(tmp.p + m * n, buf[g[m]].p, sizeof(double) * n, cudaMemcpyDeviceToDevice));
          else NK(nccl.allGather(buf[me].p, tmp.p, (size_t)n, ncclDouble, sub, 0));
          Buf out = alloc(ns);
          for (int m = 0; m < p; ++m) { Buf part{sh, tmp.p + m * n}; Shape at = zeros(nd); at[a] = m * sh[a]; box(out, part, sh, zeros(nd), at); }
          for (int m = 0; m < p; ++m) if (emulate || g[m] == me) next[m] = out;
        } else if (op == 2 || op == 3) {  // reduce-scatter along dim a / all-reduce, reduction b or a
          int rop = (int)(op == 2 ? b : a);
          Shape piece = sh; if (op == 2) piece[a] /= p; long long pn = numel(piece);
          // pack the pieces contiguously: [p][piece]
          std::vector<Buf> packed;
          for (int m = 0; m < p; ++m) {
            if (!emulate && g[m] != me) { packed.push_back(Buf{}); continue; }
            Buf pk = alloc(Shape{(long long)p * pn});
            if (op == 2) for (int j = 0; j < p; ++j) { Buf dstp{piece, pk.p + j * pn}; Shape from = zeros(nd); from[a] = j * piece[a]; box(dstp, buf[g[m]], piece, from, zeros(nd)); }
            else CK(cudaMemcpy(pk.p, buf[g[m]].p, sizeof(double) * n, cudaMemcpyDeviceToDevice));
            packed.push_back(pk);
          }
          long long tot = op == 2 ? (long long)p * pn : n;
          if (emulate) {
            for (int m = 1; m < p; ++m) { laycert_reduce<<<blocks(tot), 256>>>(packed[0].p, packed[m].p, tot, rop); CK(cudaGetLastError()); }
            if (rop == 4) { std::vector<double> h((size_t)tot); CK(cudaMemcpy(h.data(), packed[0].p, sizeof(double) * tot, cudaMemcpyDeviceToHost)); for (auto& x : h) x /= p; CK(cudaMemcpy(packed[0].p, h.data(), sizeof(double) * tot, cudaMemcpyHostToDevice)); }
            for (int m = 0; m < p; ++m) { Buf o = alloc(op == 2 ? piece : sh); CK(cudaMemcpy(o.p, packed[0].p + (op == 2 ? m * pn : 0), sizeof(double) * numel(o.shape), cudaMemcpyDeviceToDevice)); next[m] = o; }
          } else {
            Buf o = alloc(op == 2 ? piece : sh);
            if (op == 2) NK(nccl.reduceScatter(packed[pos].p, o.p, (size_t)pn, ncclDouble, rop, sub, 0));
            else NK(nccl.allReduce(packed[pos].p, o.p, (size_t)n, ncclDouble, rop, sub, 0));
            next[pos] = o;
          }
        } else if (op == 4) {  // all-to-all: split dim a, concat dim b
          Shape piece = sh; piece[a] /= p; long long pn = numel(piece);
          Shape ns = piece; ns[b] *= p;
          std::vector<Buf> packed(p), recv(p);
          for (int m = 0; m < p; ++m) {
            if (!emulate && g[m] != me) continue;
            packed[m] = alloc(Shape{(long long)p * pn});
            for (int j = 0; j < p; ++j) { Buf dstp{piece, packed[m].p + j * pn}; Shape from = zeros(nd); from[a] = j * piece[a]; box(dstp, buf[g[m]], piece, from, zeros(nd)); }
            recv[m] = alloc(Shape{(long long)p * pn});
          }
          if (emulate) {
            for (int j = 0; j < p; ++j) for (int i = 0; i < p; ++i) CK(cudaMemcpy(recv[j].p + i * pn, packed[i].p + j * pn, sizeof(double) * pn, cudaMemcpyDeviceToDevice));
          } else {
            NK(nccl.groupStart());
            for (int j = 0; j < p; ++j) { NK(nccl.send(packed[pos].p + j * pn, (size_t)pn, ncclDouble, j, sub, 0)); NK(nccl.recv(recv[pos].p + j * pn, (size_t)pn, ncclDouble, j, sub, 0)); }
            NK(nccl.groupEnd());
          }
          for (int m = 0; m < p; ++m) {
            if (!emulate && g[m] != me) continue;
            Buf out = alloc(ns);
            for (int i = 0; i < p; ++i) { Buf part{piece, recv[m].p + i * pn}; Shape at = zeros(nd); at[b] = i * piece[b]; box(out, part, piece, zeros(nd), at); }
            next[m] = out;
          }
        } else {  // broadcast from member a
          for (int m = 0; m < p; ++m) {
            if (!emulate && g[m] != me) continue;
            Buf o = alloc(sh);
            if (emulate) CK(cudaMemcpy(o.p, buf[g[a]].p, sizeof(double) * n, cudaMemcpyDeviceToDevice));
            else NK(nccl.broadcast(buf[me].p, o.p, (size_t)n, ncclDouble, (int)a, sub, 0));
            next[m] = o;
          }
        }
        for (int m = 0; m < p; ++m) if (emulate || g[m] == me) buf[g[m]] = next[m];
      }
    } else if (op == 6) {  // send-recv
      int nd = (int)rd.next(); Shape ns; for (int d = 0; d < nd; ++d) ns.push_back(rd.next());
      long long nm = rd.next();
      std::vector<Buf> next(ranks);
      for (int r : mine) next[r] = alloc(ns);
      std::vector<Buf> tmps; std::vector<long long> msgs;
      if (!emulate) NK(nccl.groupStart());
      for (long long k = 0; k < nm; ++k) {
        int sr = (int)rd.next(), dr = (int)rd.next(); Shape from, at, len;
        for (int d = 0; d < nd; ++d) from.push_back(rd.next());
        for (int d = 0; d < nd; ++d) at.push_back(rd.next());
        for (int d = 0; d < nd; ++d) len.push_back(rd.next());
        bool has_s = emulate || sr == me, has_d = emulate || dr == me;
        if (has_s && has_d) { box(next[dr], buf[sr], len, from, at); continue; }
        long long n = numel(len);
        if (has_s) { Buf t = alloc(len); box(t, buf[sr], len, from, zeros(nd)); NK(nccl.send(t.p, (size_t)n, ncclDouble, dr, comm, 0)); tmps.push_back(t); }
        if (has_d) { Buf t = alloc(len); NK(nccl.recv(t.p, (size_t)n, ncclDouble, sr, comm, 0)); tmps.push_back(t); msgs.push_back((long long)tmps.size() - 1); for (int d = 0; d < nd; ++d) msgs.push_back(at[d]); }
      }
      if (!emulate) {
        NK(nccl.groupEnd()); CK(cudaDeviceSynchronize());
        for (size_t k = 0; k < msgs.size(); k += 1 + nd) { Buf& t = tmps[(size_t)msgs[k]]; Shape at(msgs.begin() + k + 1, msgs.begin() + k + 1 + nd); box(next[me], t, t.shape, zeros(nd), at); }
      }
      for (int r : mine) buf[r] = next[r];
    } else if (op == 7) {  // local pack/unpack by tables
      int nd = (int)rd.next(); Shape ns; for (int d = 0; d < nd; ++d) ns.push_back(rd.next());
      long long per = 0; for (long long e : ns) per += e;
      for (int r = 0; r < ranks; ++r) {
        const long long* maps = W + rd.i + (size_t)r * per;
        bool run = false; for (int m : mine) run |= (m == r);
        if (!run) continue;
        D8 off; long long o = 0; for (int d = 0; d < 8; ++d) { off.v[d] = o; if (d < nd) o += ns[d]; }
        long long* dm; CK(cudaMalloc(&dm, sizeof(long long) * (per > 0 ? per : 1)));
        CK(cudaMemcpy(dm, maps, sizeof(long long) * per, cudaMemcpyHostToDevice));
        Buf out = alloc(ns); long long n = numel(ns);
        if (n > 0) { laycert_local<<<blocks(n), 256>>>(out.p, buf[r].p, n, nd, d8s(ns), strides(buf[r].shape), dm, off); CK(cudaGetLastError()); }
        buf[r] = out;
      }
      rd.i += (size_t)ranks * per;
    } else if (op == 8) {  // zero
      long long k = rd.next();
      for (long long j = 0; j < k; ++j) { int r = (int)rd.next(); for (int m : mine) if (m == r) CK(cudaMemset(buf[r].p, 0, sizeof(double) * (numel(buf[r].shape) > 0 ? numel(buf[r].shape) : 1))); }
    } else { fprintf(stderr, "unknown opcode %lld\n", op); return 3; }
  }
  CK(cudaDeviceSynchronize());
  // Check: every place of the target holds (id + 1) * multiplier (sum partials: the addend count).
  long long bad = 0, checked = 0;
  std::map<std::pair<long long, long long>, double> sums;
  for (int r : mine) {
    if (buf[r].shape != dst.local) { fprintf(stderr, "rank %d: final buffer shape differs from the target's\n", r); return 1; }
    std::vector<double> h((size_t)numel(dst.local));
    CK(cudaMemcpy(h.data(), buf[r].p, sizeof(double) * h.size(), cudaMemcpyDeviceToHost));
    if (dst.partial && !dst.sum) continue;  // a max/min/avg partial target: the certificate only
    each_place(dst, r, [&](long long loc, long long g) {
      ++checked;
      // A summed partial target: the places of one value over its group add up (checked below).
      if (dst.partial) { sums[std::make_pair(dst.group[r], g)] += h[(size_t)loc]; return; }
      double want = (double)(g + 1) * (double)src.mult;
      if (h[(size_t)loc] != want && bad++ == 0) fprintf(stderr, "rank %d: element #%lld holds %g, want %g\n", r, g, h[(size_t)loc], want);
    });
  }
  for (auto& kv : sums) {
    double want = (double)(kv.first.second + 1) * (double)src.mult;
    if (kv.second != want && bad++ == 0) fprintf(stderr, "element #%lld: its addends sum to %g, want %g\n", kv.first.second, kv.second, want);
  }
  printf("%s: %lld places checked on %zu rank(s), %lld wrong\n", bad ? "FAILED" : "OK", checked, mine.size(), bad);
  return bad ? 1 : 0;
}
