// How the sparse path's lists lie, shared by sparse_bin.cu (which writes them) and
// sparse_draw.cu (which reads them; its one body is instantiated with either layout's type).
// - Shared counting (SparseSegments): chunk-major. Chunk b's entries (circle indices) lie end to
//   end, tile by tile, from chunk_starts[b]; offsets[b][t] is where tile t's segment begins
//   among them and offsets[b][tiles] their number. Tile t's list is its segments, one per chunk,
//   in chunk order: segment b is [chunk_starts[b] + offsets[b][t], chunk_starts[b] + offsets[b][t + 1]).
// - Global counting (SparseTileLists): tile-major, one list a tile, from
//   group_starts[t / SPARSE_GROUP_TILES] + local[t], totals[t] entries.
#pragma once
#include "tiles.cuh"

// Global counting: where tile t's list begins (its group's start and its place in the group).
__device__ __forceinline__ int list_start(const int* __restrict__ group_starts, const int* __restrict__ local,
                                          int t) {
    return group_starts[t / SPARSE_GROUP_TILES] + local[t];
}

// Shared counting's lists, as the draw reads them.
struct SparseSegments {
    static constexpr bool CHUNKED = true;       // a tile's list is a segment a chunk
    const int* __restrict__ offsets;            // (chunks, tiles + 1)
    const int* __restrict__ chunk_starts;       // (chunks + 1,)
    int chunks;

    __device__ __forceinline__ int entries() const { return chunk_starts[chunks]; }   // in all lists

    // Tile t's segment of chunk b: where it starts in the list, and its entries.
    __device__ __forceinline__ int2 segment(int tiles, int b, int t) const {
        const int* row = offsets + b * (tiles + 1);
        const int at = row[t];
        return make_int2(chunk_starts[b] + at, row[t + 1] - at);
    }
};

// Global counting's lists, as the draw reads them; the draw zeroes the counters for the next frame.
struct SparseTileLists {
    static constexpr bool CHUNKED = false;      // a tile's list is one segment
    int* __restrict__ counters;                 // (tiles,)
    const int* __restrict__ group_starts;       // (groups + 1,)
    const int* __restrict__ local;              // (tiles,)
    const int* __restrict__ totals;             // (tiles,)
    int groups;

    __device__ __forceinline__ int entries() const { return group_starts[groups]; }
};

// Which segment of a tile's list circle i belongs to: its chunk (shared counting), or the one
// segment of the whole list (global counting).
template <bool CHUNKED>
__device__ __forceinline__ int segment_of(int i) { return CHUNKED ? (int)((unsigned)i / SPARSE_CHUNK) : 0; }
