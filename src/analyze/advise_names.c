/* SPDX-License-Identifier: MIT */
/*
 * What an op's name and category say to the advisor: step markers, input
 * loading, communication, copies, convolutions and their layouts, float64,
 * half precision, launches and syncs. Each string id is classified once (the
 * bits are cached per id by the engine). The word lists are those of the
 * producers (PyTorch/Kineto, TF RunMetadata and XSpace, CUDA/ROCm kernel
 * names); docs/cmd-advise.md lists them.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/advise_int.h"

#define LOWER_MAX 512 /* bytes of a name looked at (kernel names can be kilobytes) */

static bool has(const char *s, const char *w)
{
	return strstr(s, w) != NULL;
}

static bool any(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (strstr(s, *words))
			return true;
	return false;
}

/* Case-sensitive words of input loading. */
static const char *const input_words[] = {
	"DataLoader", "dataloader", "data_loader", "IteratorGetNext", "Iterator::", "GetNextFromShard",
	"QueueDequeue", "ReaderRead", "_next_data", "InfeedEnqueue", "IteratorV2", "tf_data",
	"MultiDeviceIterator", NULL
};

/* Lower-case words of communication (checked on the lower-cased name). */
static const char *const comm_words[] = {
	"nccl", "rccl", "gloo", "c10d::", "allreduce", "all_reduce", "allgather", "all_gather",
	"reducescatter", "reduce_scatter", "alltoall", "all_to_all", "recvtensor", "record_param_comms",
	"collectivereduce", "collectivebcast", "collectivegather", "collective_permute", "mpi_", "hccl",
	"horovod", "sendrecv", "all-reduce", "all-gather", "reduce-scatter", "all-to-all",
	"collective-permute", NULL
};

static bool is_tf_sendrecv(const char *s)
{
	/* TF's transfer ops: _Send, _Recv, _HostSend, _HostRecv (whole words) */
	static const char *const w[] = { "_Send", "_Recv", "_HostSend", "_HostRecv", NULL };

	for (int i = 0; w[i]; i++) {
		const char *p = strstr(s, w[i]);
		if (p) {
			char c = p[strlen(w[i])];
			if (!isalnum((unsigned char)c))
				return true;
		}
	}
	return false;
}

uint32_t tft_adv_classify_name(const char *s, size_t len)
{
	char lo[LOWER_MAX + 1];
	size_t n = len < LOWER_MAX ? len : LOWER_MAX;
	uint32_t b = 0;

	for (size_t i = 0; i < n; i++)
		lo[i] = (char)tolower((unsigned char)s[i]);
	lo[n] = 0;
	if (!strncmp(s, "ProfilerStep#", 13))
		b |= ADV_N_STEP;
	if (!strncmp(s, "aten::", 6) || !strncmp(s, "prim::", 6) || !strncmp(s, "torch::", 7) ||
	    !strncmp(s, "c10d::", 6) || !strncmp(s, "quantized::", 11) || !strncmp(s, "torchvision::", 13))
		b |= ADV_N_FWOP;
	if (s[0] == '$' && strstr(s, ".py"))
		b |= ADV_N_PYFRAME; /* XSpace's Python tracer: a frame, not an op */
	if (any(s, input_words))
		b |= ADV_N_INPUT;
	if (any(lo, comm_words) || is_tf_sendrecv(s) || has(lo, "c10d::broadcast") ||
	    has(lo, "nccl:broadcast"))
		b |= ADV_N_COMM;
	if (has(lo, "memcpy") || has(lo, "memset") || has(lo, "memcpyh2d") || has(lo, "copyhosttodevice") ||
	    has(lo, "copydevicetohost"))
		b |= ADV_N_MEMCPY;
	if ((has(lo, "conv") && !has(lo, "convert")) || has(lo, "fprop_implicit_gemm") || has(lo, "dgrad") ||
	    has(lo, "wgrad") || has(lo, "convolve"))
		b |= ADV_N_CONV;
	if (has(lo, "nchwtonhwc") || has(lo, "nhwctonchw") || has(lo, "nchw_to_nhwc") ||
	    has(lo, "nhwc_to_nchw") || has(lo, "layoutoptimizer") || has(lo, "swapdimension1and2intensor3") ||
	    has(lo, "nchwtonhwc") || has(lo, "transposenhwctonchw") || has(lo, "transposenchwtonhwc"))
		b |= ADV_N_XPOSE;
	if (has(lo, "nchw"))
		b |= ADV_N_NCHW;
	if (has(lo, "nhwc"))
		b |= ADV_N_NHWC;
	if (has(lo, "double") || has(lo, "dgemm") || has(lo, "float64") || has(lo, "_f64") ||
	    has(lo, "f64_") || has(lo, "zgemm"))
		b |= ADV_N_F64;
	if (has(lo, "half") || has(lo, "bf16") || has(lo, "f16") || has(lo, "h884") || has(lo, "h1688") ||
	    has(lo, "h16816") || has(lo, "hmma") || has(lo, "bfloat16") || has(lo, "fp16"))
		b |= ADV_N_HALF;
	if (has(lo, "htod") || has(lo, "h2d") || has(lo, "hosttodevice") || has(lo, "host to device"))
		b |= ADV_N_HTOD;
	if (has(lo, "dtoh") || has(lo, "d2h") || has(lo, "devicetohost") || has(lo, "device to host"))
		b |= ADV_N_DTOH;
	if (has(lo, "dtod") || has(lo, "d2d") || has(lo, "devicetodevice") || has(lo, "ptop") || has(lo, "p2p"))
		b |= ADV_N_DTOD;
	if (has(lo, "pageable"))
		b |= ADV_N_PAGEABLE;
	if (!strcmp(s, "[memory]"))
		b |= ADV_N_MEMEVENT;
	if (has(s, "BatchNorm") && !has(s, "FusedBatchNorm") && !has(lo, "cudnn") && !has(lo, "native_batch_norm"))
		b |= ADV_N_BATCHNORM;
	if (has(s, "FusedBatchNorm"))
		b |= ADV_N_FUSEDBN;
	if (has(lo, "synchronize") || has(lo, "streamwait") || has(lo, "eventsync") || has(s, "aten::item") ||
	    has(s, "aten::_local_scalar_dense"))
		b |= ADV_N_SYNC;
	if (has(lo, "launchkernel") || has(lo, "modulelaunch") || has(lo, "launchcooperativekernel") ||
	    has(lo, "graphlaunch") ||
	    ((!strncmp(lo, "cuda", 4) || !strncmp(lo, "hip", 3) || !strncmp(lo, "cu", 2)) &&
	     (has(lo, "memcpy") || has(lo, "memset"))))
		b |= ADV_N_LAUNCH;
	if (has(s, "Optimizer.step") || has(s, "optimizer.step") || has(s, "ApplyAdam") ||
	    has(s, "ApplyGradientDescent") || has(s, "ResourceApply"))
		b |= ADV_N_OPTIMIZER;
	return b;
}

uint32_t tft_adv_classify_cat(const char *s)
{
	uint32_t b = 0;

	if (!strcmp(s, "gpu_memcpy") || !strcmp(s, "gpu_memset") || !strcmp(s, "Memcpy") ||
	    !strcmp(s, "Memset") || !strcmp(s, "mtia_memcpy"))
		b |= ADV_K_MEMCPY;
	if (!strcmp(s, "kernel") || !strcmp(s, "Kernel"))
		b |= ADV_K_KERNEL;
	if (!strcmp(s, "python_function"))
		b |= ADV_K_PYFUNC;
	if (!strcmp(s, "user_annotation") || !strcmp(s, "gpu_user_annotation") || !strcmp(s, "Trace"))
		b |= ADV_K_ANNOT;
	if (!strcmp(s, "cpu_op") || !strcmp(s, "Operator") || !strcmp(s, "operator"))
		b |= ADV_K_OP;
	if (!strcmp(s, "cuda_runtime") || !strcmp(s, "cuda_driver") || !strcmp(s, "Runtime") ||
	    !strcmp(s, "hip_runtime"))
		b |= ADV_K_RUNTIME;
	if (!strcmp(s, "cuda_sync"))
		b |= ADV_K_SYNC;
	return b;
}
