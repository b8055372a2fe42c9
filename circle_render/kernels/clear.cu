// Fill the image with the clear colour, one colour per row (snow scenes shade rows).
extern "C" __global__ void clear_image(float4* __restrict__ image, const float4* __restrict__ rows,
                                       int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < width && y < height) image[y * width + x] = rows[y];
}
