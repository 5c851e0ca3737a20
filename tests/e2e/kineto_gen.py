# SPDX-License-Identifier: MIT
# Hand-made Kineto (PyTorch profiler) traces for the advisor's tests: the JSON
# libkineto writes (ProfilerStep#N user annotations, cpu_op ops, cuda_runtime
# launches with ac2g flows to kernels and copies on GPU streams, distributedInfo
# per rank), built event by event so that a trace holds exactly one known problem,
# or its fixed twin. Times in microseconds, as Kineto writes them.
import json

PID = 4242
TID = 4242
GPU_PID = 0


class Trace:
    def __init__(self, rank=None, world=None, start_us=1700000000000000.0):
        self.ev = []
        self.corr = 1000
        self.ext = 1
        self.rank = rank
        self.world = world
        self.t = start_us
        self.streams = set()
        self.ev.append({"name": "process_name", "ph": "M", "ts": start_us, "pid": PID, "tid": 0,
                        "args": {"name": "python3"}})
        self.ev.append({"name": "thread_name", "ph": "M", "ts": start_us, "pid": PID, "tid": TID,
                        "args": {"name": "thread %d (python3)" % TID}})
        self.ev.append({"name": "process_name", "ph": "M", "ts": start_us, "pid": GPU_PID, "tid": 0,
                        "args": {"name": "GPU 0"}})

    def x(self, cat, name, ts, dur, pid=PID, tid=TID, args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": round(ts, 3),
             "dur": round(dur, 3)}
        a = {"External id": self.ext}
        self.ext += 1
        if args:
            a.update(args)
        e["args"] = a
        self.ev.append(e)
        return e

    def step(self, n, ts, dur):
        return self.x("user_annotation", "ProfilerStep#%d" % n, ts, dur)

    def op(self, name, ts, dur, args=None):
        return self.x("cpu_op", name, ts, dur, args=args)

    def annotation(self, name, ts, dur):
        return self.x("user_annotation", name, ts, dur)

    def launch(self, ts, dur, kname, kts, kdur, stream=7, cat="kernel", args=None, call="cudaLaunchKernel"):
        """A runtime launch call on the host and the device work it starts, with its ac2g flow."""
        c = self.corr
        self.corr += 1
        self.x("cuda_runtime", call, ts, dur, args={"cbid": 211, "correlation": c})
        self.ev.append({"ph": "s", "id": c, "pid": PID, "tid": TID, "ts": round(ts, 3), "cat": "ac2g", "name": "ac2g"})
        ka = {"device": 0, "context": 1, "stream": stream, "correlation": c}
        if args:
            ka.update(args)
        self.kernel(kname, kts, kdur, stream, cat, ka)
        self.ev.append({"ph": "f", "id": c, "pid": GPU_PID, "tid": stream, "ts": round(kts, 3), "cat": "ac2g",
                        "name": "ac2g", "bp": "e"})

    def kernel(self, name, ts, dur, stream=7, cat="kernel", args=None):
        if stream not in self.streams:
            self.streams.add(stream)
            self.ev.append({"name": "thread_name", "ph": "M", "ts": self.t, "pid": GPU_PID, "tid": stream,
                            "args": {"name": "stream %d" % stream}})
        e = {"ph": "X", "cat": cat, "name": name, "pid": GPU_PID, "tid": stream, "ts": round(ts, 3),
             "dur": round(dur, 3), "args": args or {"device": 0, "stream": stream}}
        self.ev.append(e)

    def doc(self):
        d = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB",
                                                        "totalGlobalMem": 85899345920}],
             "traceEvents": self.ev}
        if self.rank is not None:
            d["distributedInfo"] = {"backend": "nccl", "rank": self.rank, "world_size": self.world}
        return d

    def write(self, path):
        with open(path, "w") as fp:
            json.dump(self.doc(), fp)
        return path


# ---- scenarios: each returns a Trace; bad=True holds the problem, bad=False its fix ----

STEPS = 6


def launch_bound(bad):
    """Each step: 300 tiny element-wise ops, each launching a 3 us kernel right after its
    8 us launch call (the GPU waits for the CPU), against 12 large kernels queued ahead."""
    t = Trace()
    ts = t.t
    for s in range(STEPS):
        if bad:
            step = 300 * 14.0 + 50
            t.step(s, ts, step)
            c = ts + 20
            for i in range(300):
                t.op("aten::add", c, 12)
                t.launch(c + 2, 8, "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", c + 11, 3)
                c += 14
        else:
            step = 12 * 350.0 + 400
            t.step(s, ts, step)
            c = ts + 20
            k = ts + 40
            for i in range(12):
                t.op("aten::mm", c, 20)
                t.launch(c + 2, 8, "ampere_sgemm_128x128_nn", k, 350)
                c += 22
                k += 350
        ts += step + 5
    return t


def nchw_convs(bad):
    """Mixed-precision convolutions: NCHW tensors make cuDNN transpose to NHWC and back
    around each conv (nchwToNhwc / nhwcToNchw kernels); channels_last runs the conv alone."""
    t = Trace()
    ts = t.t
    for s in range(STEPS):
        step = 10 * 1400.0 + 200
        t.step(s, ts, step)
        c = ts + 10
        k = ts + 30
        for i in range(10):
            t.op("aten::cudnn_convolution", c, 60, args={"Input type": ["c10::Half", "c10::Half"]})
            if bad:
                t.launch(c + 2, 6, "void cudnn::ops::nchwToNhwcKernel<__half, __half, float, false, true, (cudnnKernelDataType_t)0>", k, 200)
                k += 200
            t.launch(c + 10, 6, "sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x16", k, 900)
            k += 900
            if bad:
                t.launch(c + 20, 6, "void cudnn::ops::nhwcToNchwKernel<__half, __half, float, true, false, (cudnnKernelDataType_t)0>", k, 200)
                k += 200
            else:
                k += 400  # (the same step length: the fix leaves the GPU idle there)
            c += 70
        ts += step + 5
    return t


def float64(bad):
    """Element-wise kernels in double precision (a NumPy float64 input) against float."""
    t = Trace()
    ts = t.t
    ty = "double" if bad else "float"
    for s in range(STEPS):
        step = 5000.0
        t.step(s, ts, step)
        c = ts + 10
        k = ts + 30
        for i in range(8):
            t.op("aten::mul", c, 20)
            t.launch(c + 2, 6, "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<%s>>" % ty, k, 500)
            c += 30
            k += 550
        ts += step + 5
    return t


def pageable(bad):
    """The batch copied to the GPU from pageable memory, against pinned memory."""
    t = Trace()
    ts = t.t
    kind = "Pageable" if bad else "Pinned"
    for s in range(STEPS):
        step = 6000.0
        t.step(s, ts, step)
        t.op("aten::copy_", ts + 10, 30)
        t.launch(ts + 12, 10, "Memcpy HtoD (%s -> Device)" % kind, ts + 25, 600, cat="gpu_memcpy",
                 args={"bytes": 6291456}, call="cudaMemcpyAsync")
        k = ts + 700
        for i in range(5):
            t.op("aten::mm", ts + 50 + i * 30, 20)
            t.launch(ts + 52 + i * 30, 8, "ampere_sgemm_128x128_nn", k, 1000)
            k += 1000
        ts += step + 5
    return t


def input_bound(bad):
    """The step starts by waiting for the DataLoader (the GPU idle), against a batch ready."""
    t = Trace()
    ts = t.t
    wait = 4000.0 if bad else 40.0
    for s in range(STEPS):
        step = wait + 5000.0
        t.step(s, ts, step)
        t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", ts + 5, wait)
        c = ts + wait + 20
        k = c + 30
        for i in range(4):
            t.op("aten::mm", c, 20)
            t.launch(c + 2, 8, "ampere_sgemm_128x128_nn", k, 1100)
            c += 25
            k += 1100
        ts += step + 5
    return t


def cpu_op(bad):
    """An op running on the CPU (no kernel launched from it) beside the GPU's work."""
    t = Trace()
    ts = t.t
    for s in range(STEPS):
        step = 8000.0
        t.step(s, ts, step)
        t.op("aten::nonzero", ts + 10, 3000)
        if not bad:
            t.launch(ts + 12, 8, "void at::native::nonzero_kernel<float>", ts + 30, 50)
        c = ts + 3100
        k = ts + 3150
        for i in range(4):
            t.op("aten::mm", c, 20)
            t.launch(c + 2, 8, "ampere_sgemm_128x128_nn", k, 1000)
            c += 25
            k += 1000
        ts += step + 5
    return t


def exposed_comm(bad):
    """The gradient all-reduce after the backward pass (exposed), against overlapped with it."""
    t = Trace()
    ts = t.t
    for s in range(STEPS):
        step = 10000.0
        t.step(s, ts, step)
        c = ts + 10
        for i in range(8):
            t.op("aten::mm", c, 20)
            t.launch(c + 2, 8, "ampere_sgemm_128x128_nn", ts + 50 + i * 900, 900)
            c += 25
        t.op("c10d::allreduce_", c, 30)
        start = ts + 50 + 8 * 900 if bad else ts + 2000
        t.launch(c + 2, 8, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
                 max(start, c + 12), 2400, stream=20,
                 args={"Collective name": "allreduce", "In msg nelems": 6291456, "Out msg nelems": 6291456,
                       "Group size": 2, "dtype": "Float"})
        ts += step + 5
    return t


def straggler(rank, slow_rank):
    """One rank of four: compute then an all-reduce that ends together on every rank (it
    waits for the slowest); rank slow_rank computes 50% longer (None: balanced)."""
    t = Trace(rank=rank, world=4)
    ts = t.t
    base = 8000.0
    slow = base * 1.5 if rank == slow_rank else base
    worst = base * 1.5 if slow_rank is not None else base
    for s in range(STEPS):
        step = worst + 2000 + 200
        t.step(s, ts, step)
        c = ts + 10
        for i in range(8):
            t.op("aten::mm", c, 20)
            t.launch(c + 2, 8, "ampere_sgemm_128x128_nn", ts + 50 + i * slow / 8, slow / 8)
            c += 25
        t.op("c10d::allreduce_", c, 30)
        comm_start = ts + 50 + slow
        comm_end = ts + 50 + worst + 2000
        t.launch(c + 2, 8, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
                 comm_start, comm_end - comm_start, stream=20,
                 args={"Collective name": "allreduce", "In msg nelems": 6291456, "Out msg nelems": 6291456,
                       "Group size": 4, "dtype": "Float"})
        ts += step + 5
    return t


def slow_steps(bad):
    """Ten steps of 5 ms; in one of them (bad) an extra 6 ms copy to the host."""
    t = Trace()
    ts = t.t
    for s in range(10):
        extra = 6000.0 if bad and s == 6 else 0.0
        step = 5000.0 + extra
        t.step(s, ts, step)
        c = ts + 10
        k = ts + 30
        for i in range(4):
            t.op("aten::mm", c, 20)
            t.launch(c + 2, 8, "ampere_sgemm_128x128_nn", k, 1100)
            c += 25
            k += 1100
        if extra:
            t.op("aten::copy_", ts + 4600, extra)
        ts += step + 5
    return t
