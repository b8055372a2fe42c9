// The course's circle arrays (kernels/course_compat.cuh, cuConstRendererParams) from the
// scaffold's after each animation step (circle_render/cuda/student.py, CourseParams.refresh):
// position 3n floats (x, y, z), radius n floats, from n float4 (x, y, z, r). One launch a frame
// (two CuPy strided copies cost the host about twice as much). Twin: twins/course_params.py.
extern "C" __global__ void split_circles(const float4* __restrict__ circles, float* __restrict__ position,
                                         float* __restrict__ radius, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float4 c = circles[i];
    position[3 * i] = c.x;
    position[3 * i + 1] = c.y;
    position[3 * i + 2] = c.z;
    radius[i] = c.w;
}
