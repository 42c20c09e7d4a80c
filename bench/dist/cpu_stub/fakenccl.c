#include <string.h>
typedef struct { char internal[128]; } ncclUniqueId;
int ncclGetUniqueId(ncclUniqueId* id) { memset(id, 0, sizeof *id); return 0; }
int ncclCommInitRank(void** c, int n, ncclUniqueId id, int r) { *c = (void*)1; return n == 1 ? 0 : 1; }
int ncclCommSplit(void* c, int a, int b, void** n, void* cfg) { *n = c; return 0; }
int ncclAllReduce(const void* s, void* r, unsigned long n, int t, int op, void* c, void* st) { if (s != r) memcpy(r, s, n * 8); return 0; }
int ncclAllGather() { return 1; } int ncclReduceScatter() { return 1; } int ncclBroadcast() { return 1; }
int ncclSend() { return 1; } int ncclRecv() { return 1; } int ncclGroupStart() { return 0; } int ncclGroupEnd() { return 0; }
