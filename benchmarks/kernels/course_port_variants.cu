// The ported tiled kernels (examples/course_port/) built with each set of helpers, for
// benchmarks/course_helpers.py: HELPERS 0 the scaffold's (course_compat.cuh), 1 the facts'
// (course_facts.cuh), 2 the scaffold's with its any-shape scan (before: Hillis and Steele),
// 3 the scaffold's with a scan of shuffles
// (shuffleScan: what course_compat.cuh had before it took the course's warp step). PORT 0: tiled_scan.cu (16 x 16), 1: tiled_exact.cu (32 x 32).
#include "course_facts.cuh"

#if HELPERS == 1
#define sharedMemExclusiveScan factsScan
#define shadePixel factsShadePixel
#define lookupColor factsLookupColor
#define circleInBoxConservative factsCircleInBoxConservative
#define circleInBox factsCircleInBox
#elif HELPERS == 2
#define sharedMemExclusiveScan(t, in, out, scratch, size) courseScanAnyShape(in, out, scratch, size)
#elif HELPERS == 3
#define sharedMemExclusiveScan shuffleScan
#endif

#if PORT == 0
#include "../../examples/course_port/tiled_scan.cu"
#else
#include "../../examples/course_port/tiled_exact.cu"
#endif
