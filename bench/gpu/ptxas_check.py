#!/usr/bin/env python3
"""Compile an emitted kernel WITHOUT a GPU or nvcc: NVRTC (pip nvidia-cuda-nvrtc) to PTX, then
triton's bundled ptxas -v (registers, spills). The host launcher is left out (it needs nvcc).
NVRTC 13 writes PTX ISA 9.x, older than ptxas knows: the .version line is lowered to 8.7.

Usage: python3 bench/gpu/ptxas_check.py KERNEL.cu [sm_90a|sm_80] [-- extra NVRTC options]
"""
import ctypes
import glob
import os
import re
import subprocess
import sys
import sysconfig

site = sysconfig.get_paths()["purelib"]
nvrtc = (glob.glob(os.path.join(site, "nvidia", "*", "lib", "libnvrtc.so*"))
         + glob.glob(os.path.join(site, "nvidia", "cuda_nvrtc", "lib", "libnvrtc.so*")))
ptxas = os.path.join(site, "triton", "backends", "nvidia", "bin", "ptxas")
if not nvrtc or not os.path.exists(ptxas):
    sys.exit("SKIP: needs pip nvidia-cuda-nvrtc and triton (for ptxas)")
lib = ctypes.CDLL(sorted(nvrtc)[0])
path = sys.argv[1]
arch = sys.argv[2] if len(sys.argv) > 2 else "sm_90a"
extra = sys.argv[4:] if len(sys.argv) > 3 and sys.argv[3] == "--" else []
prog = ctypes.c_void_p()
assert lib.nvrtcCreateProgram(ctypes.byref(prog), open(path, "rb").read(), path.encode(), 0, None, None) == 0
opts = [f"--gpu-architecture=compute_{arch[3:]}".encode(), b"-std=c++17", b"-default-device"] + [e.encode() for e in extra]
rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
n = ctypes.c_size_t()
lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
log = ctypes.create_string_buffer(n.value)
lib.nvrtcGetProgramLog(prog, log)
if log.value.strip():
    print(log.value.decode())
if rc != 0:
    sys.exit("NVRTC FAILED")
lib.nvrtcGetPTXSize(prog, ctypes.byref(n))
ptx = ctypes.create_string_buffer(n.value)
lib.nvrtcGetPTX(prog, ptx)
out = os.path.splitext(path)[0] + f".{arch}.ptx"
open(out, "wb").write(re.sub(rb"\.version \d+\.\d+", b".version 8.7", ptx.value))
r = subprocess.run([ptxas, f"-arch={arch}", "-v", "-O3", out, "-o", out + ".cubin"], capture_output=True, text=True)
print(r.stdout + r.stderr)
sys.exit(r.returncode)
