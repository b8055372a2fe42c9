// The drawing options' output (docs/drawing.md, "Output"): premultiplied colour P and alpha A
// to straight colour, rgb = P / A where A > 0 and 0 where A == 0, alpha A. Run when the
// picture is read and the background is not opaque (with an opaque one A is 1 and P is the
// picture). Used by both drawing paths (cuda/drawing.py). NumPy twin:
// circle_render/twins/finish_drawing.py (bit for bit: the division is correctly rounded).
extern "C" __global__ void finish_drawing(const float4* __restrict__ image,   // (count,) P r, g, b, A
                                          float4* __restrict__ straight,      // (count,) r, g, b, A
                                          int count) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    const float4 p = image[k];
    straight[k] = p.w > 0.f ? make_float4(__fdiv_rn(p.x, p.w), __fdiv_rn(p.y, p.w), __fdiv_rn(p.z, p.w), p.w)
                            : make_float4(0.f, 0.f, 0.f, p.w);
}
