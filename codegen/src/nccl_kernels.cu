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
