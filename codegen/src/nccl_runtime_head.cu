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

