// What the ports' CuPy calls launch, written in C++ for the course-style originals beside this
// file (tile_lists_course.cu, sort_by_tile_course.cu), so that each original and its port are
// one program: the same kernels in the same order, memory kept and reused as CuPy's memory pool
// keeps it, the same host reads, the same CUDA graph for a still scene. Written for this project
// from what CuPy 14 documents and does (README.md, "The host code"); not CuPy's code. Host code
// with thrust and CUB: the course's harness (nvcc) compiles it, NVRTC does not.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <map>

#include <cub/device/device_scan.cuh>
#include <thrust/device_ptr.h>
#include <thrust/functional.h>
#include <thrust/iterator/constant_iterator.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/sort.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/transform.h>

// A CUDA call that must succeed: else say which one, and stop (the checker sees the scene fail).
static void cudaCheck(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        exit(1);
    }
}

// Device memory kept and reused, as CuPy's memory pool keeps it: cudaMalloc only for a size it
// does not hold, never cudaFree (a cudaMalloc or cudaFree in a frame waits for the GPU, which a
// port never pays). Sizes are rounded to 512 bytes, as CuPy's pool rounds them. thrust takes
// its temporaries from it (value_type, allocate, deallocate: thrust's allocator interface).
class DevicePool {
public:
    typedef char value_type;

    char* allocate(std::ptrdiff_t bytes) {
        const size_t size = (static_cast<size_t>(bytes > 0 ? bytes : 1) + 511) / 512 * 512;
        std::multimap<size_t, char*>::iterator fit = free_.lower_bound(size);
        char* p;
        size_t held;
        if (fit != free_.end()) {
            p = fit->second;
            held = fit->first;
            free_.erase(fit);
        } else {
            cudaCheck(cudaMalloc(&p, size), "DevicePool: cudaMalloc");
            held = size;
        }
        used_[p] = held;
        return p;
    }

    void deallocate(char* p, size_t = 0) {
        std::map<char*, size_t>::iterator it = used_.find(p);
        if (it == used_.end()) return;
        free_.insert(std::make_pair(it->second, p));
        used_.erase(it);
    }

private:
    std::multimap<size_t, char*> free_;     // size -> block, kept for the next request
    std::map<char*, size_t> used_;          // block -> size
};

// CuPy's elementwise kernels: a thread an element, min(128, n) threads a block.
#define ELEMENTWISE_THREADS 128
static dim3 elementwiseGrid(int n) { return dim3((n + ELEMENTWISE_THREADS - 1) / ELEMENTWISE_THREADS); }
static dim3 elementwiseBlock(int n) { return dim3(n < ELEMENTWISE_THREADS ? n : ELEMENTWISE_THREADS); }

__global__ void cupyCopyKernel(const int* in, int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

__global__ void cupySubtractKernel(const int* a, const int* b, int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] - b[i];
}

__global__ void cupyFillKernel(int* out, int value, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}

// cupy.take(a, indices, out=out): indices taken modulo a's size (negative ones wrap).
__global__ void cupyTakeKernel(const int* a, const long long* indices, int* out, int n, long long range) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long j = indices[i] % range;
    if (j < 0) j += range;
    out[i] = a[j];
}

// The CuPy calls, one function each, on stream s.

// a.copy(), or the copy into out that cupy.cumsum(a, out=out) makes before it scans in place.
static void cupyCopy(const int* in, int* out, int n, cudaStream_t s) {
    if (n > 0) cupyCopyKernel<<<elementwiseGrid(n), elementwiseBlock(n), 0, s>>>(in, out, n);
}

// cupy.subtract(a, b, out=out)
static void cupySubtract(const int* a, const int* b, int* out, int n, cudaStream_t s) {
    if (n > 0) cupySubtractKernel<<<elementwiseGrid(n), elementwiseBlock(n), 0, s>>>(a, b, out, n);
}

// out.fill(value): cudaMemsetAsync for 0, a kernel otherwise.
static void cupyFill(int* out, int value, int n, cudaStream_t s) {
    if (n <= 0) return;
    if (value == 0)
        cudaMemsetAsync(out, 0, sizeof(int) * n, s);
    else
        cupyFillKernel<<<elementwiseGrid(n), elementwiseBlock(n), 0, s>>>(out, value, n);
}

// cupy.take(a, indices, out=out), a of aSize ints.
static void cupyTake(const int* a, const size_t* indices, int* out, int n, int aSize, cudaStream_t s) {
    if (n > 0)
        cupyTakeKernel<<<elementwiseGrid(n), elementwiseBlock(n), 0, s>>>(
            a, reinterpret_cast<const long long*>(indices), out, n, aSize);
}

// cupy.cumsum(a, out=inclusive): a copied into inclusive, then CUB's inclusive sum in place,
// its workspace from the pool.
static void cupyCumsum(const int* a, int* inclusive, int n, DevicePool& pool, cudaStream_t s) {
    if (n <= 0) return;
    cupyCopy(a, inclusive, n, s);
    size_t bytes = 0;
    cub::DeviceScan::InclusiveSum(NULL, bytes, inclusive, inclusive, n, s);
    char* workspace = pool.allocate(bytes);
    cub::DeviceScan::InclusiveSum(workspace, bytes, inclusive, inclusive, n, s);
    pool.deallocate(workspace);
}

// order = cupy.argsort(keys) of n int keys: the keys copied (into sortKeys), the index sequence
// 0..n-1 (size_t, into order), then thrust's stable sort of the copy by key, carrying the
// indices (a radix sort; its temporaries from the pool; no synchronize).
static void cupyArgsort(const int* keys, int* sortKeys, size_t* order, int n, DevicePool& pool, cudaStream_t s) {
    if (n <= 0) return;
    cupyCopy(keys, sortKeys, n, s);
    thrust::transform(thrust::cuda::par_nosync(pool).on(s),
                      thrust::make_counting_iterator<size_t>(0), thrust::make_counting_iterator<size_t>(n),
                      thrust::make_constant_iterator<ptrdiff_t>(n), thrust::device_pointer_cast(order),
                      thrust::modulus<size_t>());
    thrust::device_ptr<int> first = thrust::device_pointer_cast(sortKeys);
    thrust::stable_sort_by_key(thrust::cuda::par_nosync(pool).on(s), first, first + n,
                               thrust::device_pointer_cast(order), thrust::less<int>());
}

// One read of a device int (int(x[k]) in the port): it waits for everything queued first.
static int readDeviceInt(const int* p) {
    int value = 0;
    cudaCheck(cudaMemcpy(&value, p, sizeof(int), cudaMemcpyDeviceToHost), "reading a count back");
    return value;
}

// The port's use_graph = True (the scaffold's load(), CuPy's stream capture): frame(0) once as
// it is, then frame(stream) captured into a CUDA graph on a stream of its own (relaxed mode),
// to be replayed with cudaGraphLaunch(graph, 0) each frame.
template <class Frame>
static cudaGraphExec_t captureFrame(Frame frame) {
    frame(static_cast<cudaStream_t>(0));
    cudaCheck(cudaDeviceSynchronize(), "the frame before its capture");
    cudaStream_t stream;
    cudaCheck(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cudaCheck(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
    frame(stream);
    cudaGraph_t graph;
    cudaCheck(cudaStreamEndCapture(stream, &graph), "capturing the frame into a CUDA graph");
    cudaGraphExec_t exec;
    cudaCheck(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    return exec;
}
