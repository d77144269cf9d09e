/// @file
/// @brief One warp's segment of a tile held in shared memory from load to store, in the
///        "blocked" arrangement for its lanes (lane l owns the segment's items
///        [l * Items, (l + 1) * Items)) while global memory is accessed fully coalesced: the warp
///        loads its segment striped — 16-byte `cp.async` copies when the iterator is an aligned
///        raw pointer to T, converted 16-byte vectors from a raw pointer to another type, single
///        elements otherwise — into a warp-private stage, each lane folds and rewrites its own
///        items there, and the warp stores the stage back striped (one element per lane, 16-byte
///        vectors for outputs of 1 or 2 bytes, converted when the output type is not T). The
///        stage is XOR-swizzled so that both the striped and the blocked accesses are free of
///        bank conflicts. No item is held in registers across the steps.
#pragma once

#include <nv/target>

#include <cuda/std/cstdint>
#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/vec.cuh>

namespace tilewise::detail {

/// Shared-memory stage of one warp: 32 * Items elements as vectors of vec_elems<T> (Items must
/// be a multiple of vec_elems<T>, or vec_elems<T> == 1).
template <class T, unsigned Items>
struct warp_stage {
  static constexpr unsigned V = Items % vec_elems<T> == 0 ? vec_elems<T> : 1u;
  static constexpr unsigned R = Items / V;  ///< vectors per lane
  using vec_t                 = vec<T, V>;

  vec_t slot[32 * R];

  /// Physical slot of vector j: the low three bits XOR the next three, a permutation of each
  /// group of 8 slots (128 bytes) that spreads both access patterns over all banks.
  __host__ __device__ static constexpr unsigned swz(unsigned j) { return j ^ ((j >> 3) & 7u); }

  /// How a whole, 16-byte aligned segment of `It` moves between global memory and the stage:
  /// 16-byte vectors of T (a raw pointer to T, or to a type with T's bits: converts_bitwise),
  /// 16-byte vectors of another type U converted on the way (a raw pointer to U that packs whole
  /// vectors into a segment), or element by element.
  enum class path { elements, vectors, converting };
  template <class It>
  __host__ __device__ static constexpr path path_of() {
    if constexpr (cuda::std::is_pointer_v<It>) {
      using U = cuda::std::remove_cv_t<cuda::std::remove_pointer_t<It>>;
      if constexpr (converts_bitwise<U, T>) {
        return V > 1 ? path::vectors : path::elements;
      } else if constexpr (vec_elems<U> > 1 && (32 * Items) % vec_elems<U> == 0) {
        return path::converting;
      }
    }
    return path::elements;
  }

  /// Whether the segment `seg[0, count)` takes the vector path P: whole and aligned.
  template <path P, class It>
  TILEWISE_DEVICE static bool whole(It seg, unsigned count) {
    if constexpr (P != path::elements) {
      return count == 32 * Items && aligned16(seg);
    } else {
      return false;
    }
  }

  /// Loads the warp's segment `seg[0, count)` (count <= 32 * Items) into the stage; missing items
  /// are copies of `fill`. Whole aligned segments of T (or of a type with T's bits) go by
  /// `cp.async` (sm_80 and later: global to shared memory without registers, all of a lane's
  /// copies in flight together; before: as below), of another arithmetic type as vectors
  /// through registers, converted (load_converting); other iterators, partial or
  /// unaligned segments element by element. Warp-collective.
  template <class It>
  TILEWISE_DEVICE void load(It seg, unsigned count, T const& fill) {
    load(seg, count, fill, [] {});
  }

  /// As load(seg, count, fill), and calls `in_flight()` (warp-collective) once this stage's vector
  /// loads are issued, before waiting for them, so that loads issued there are in flight together
  /// with these (element by element: after them).
  template <class It, class F>
  TILEWISE_DEVICE void load(It seg, unsigned count, T const& fill, F&& in_flight) {
    unsigned const lane = threadIdx.x % 32;
    bool const vectors  = whole<path_of<It>()>(seg, count);
    if (vectors) {
      if constexpr (path_of<It>() == path::vectors) {  // before sm_80 through registers: a conversion that keeps the bits
        NV_IF_ELSE_TARGET(NV_PROVIDES_SM_80, (copy_async(reinterpret_cast<vec_t const*>(seg), lane, in_flight);),
                          (load_converting(seg, lane, in_flight);))
      } else if constexpr (path_of<It>() == path::converting) {
        load_converting(seg, lane, in_flight);
      }
    } else {
#pragma unroll
      for (unsigned m = 0; m < Items; ++m) {
        unsigned const j = 32 * m + lane;
        T const x        = j < count ? T(seg[j]) : fill;
        slot[swz(j / V)].e[j % V] = x;
      }
    }
    __syncwarp();
    if (!vectors) {  // outside the element loop's branch: inside, ptxas kept both loops' loads live
      in_flight();
    }
  }

  /// Item j of the segment. Lanes reading or writing items 32 m + lane (one row) are free of bank
  /// conflicts, as the striped loads and stores are.
  TILEWISE_DEVICE T& item(unsigned j) { return slot[swz(j / V)].e[j % V]; }

  /// Byte offset of item j in the stage.
  __host__ __device__ static constexpr unsigned offset_of(unsigned j) {
    return swz(j / V) * unsigned(sizeof(vec_t)) + (j % V) * unsigned(sizeof(T));
  }

  /// Row m of the segment is items [32 m, 32 m + 32), item 32 m + l on lane l. Where slots are a
  /// power of two bytes, the swizzle moves a row as a whole: item 32 m + lane lies at
  /// (offset_of(lane) ^ row_xor(m)) + row_add(m), both constants of m: row m's swizzle pattern
  /// flips the bits of the lanes' offsets that lie within a row, the rest is a constant
  /// (rows_by_xor checks it for every lane and row). An unrolled loop over the rows thus
  /// addresses each item with one XOR and an immediate from the lane's offset_of(lane).
  static constexpr bool pow2_slots = (sizeof(vec_t) & (sizeof(vec_t) - 1)) == 0;
  __host__ __device__ static constexpr unsigned row_xor(unsigned m) {
    unsigned const pattern   = ((32 / V) * m >> 3) & 7u;                         // swz's (j >> 3) & 7 in row m
    unsigned const row_bytes = (32 / V) * static_cast<unsigned>(sizeof(vec_t));  // a row's slots
    return (pattern * static_cast<unsigned>(sizeof(vec_t))) & (row_bytes - 1);
  }
  __host__ __device__ static constexpr unsigned row_add(unsigned m) { return offset_of(32 * m) - row_xor(m); }
  __host__ __device__ static constexpr bool rows_by_xor() {
    if constexpr (!pow2_slots) {
      return false;
    } else {
      for (unsigned m = 0; m < Items; ++m) {
        for (unsigned l = 0; l < 32; ++l) {
          if (offset_of(32 * m + l) != (offset_of(l) ^ row_xor(m)) + row_add(m)) {
            return false;
          }
        }
      }
      return true;
    }
  }
  /// This lane's offset_of(lane), the base of its items of every row.
  TILEWISE_DEVICE static unsigned lane_offset() { return offset_of(threadIdx.x % 32); }
  /// Item 32 m + lane (= item(32 m + lane)), `lane_off` from lane_offset(); m a constant of an
  /// unrolled loop.
  TILEWISE_DEVICE T& row_item(unsigned lane_off, unsigned m) {
    if constexpr (rows_by_xor()) {
      return *reinterpret_cast<T*>(reinterpret_cast<unsigned char*>(slot) + ((lane_off ^ row_xor(m)) + row_add(m)));
    } else {
      return item(32 * m + threadIdx.x % 32);
    }
  }

  /// N items of T side by side within one slot (N divides V), moved as one access.
  template <unsigned N>
  struct alignas(N * sizeof(T)) items {
    T e[N];
  };
  /// Items [j, j + N) of the stage (j a multiple of N).
  template <unsigned N>
  TILEWISE_DEVICE items<N>& items_at(unsigned j) {
    return *reinterpret_cast<items<N>*>(&slot[swz(j / V)].e[j % V]);
  }

  /// A whole segment of U (16-byte aligned) into the stage as T: 16-byte loads of U, all in
  /// flight together, then each vector converted into the stage (put_converted).
  template <class U, class F>
  TILEWISE_DEVICE void load_converting(U const* seg, unsigned lane, F&& in_flight) {
    using uvec            = vec<U, vec_elems<U>>;
    constexpr unsigned NU = 32 * Items / vec_elems<U>;  // vectors of U in the segment
    constexpr unsigned RU = (NU + 31) / 32;              // per lane
    uvec const* p         = reinterpret_cast<uvec const*>(seg);
    uvec u[RU];
#pragma unroll
    for (unsigned k = 0; k < RU; ++k) {
      if (NU % 32 == 0 || 32 * k + lane < NU) {
        u[k] = p[32 * k + lane];
      }
    }
    in_flight();
#pragma unroll
    for (unsigned k = 0; k < RU; ++k) {
      if (NU % 32 == 0 || 32 * k + lane < NU) {
        put_converted(32 * k + lane, u[k]);
      }
    }
  }

  /// Vector m of a segment of U, converted to T, into the stage: as whole vectors of T where they
  /// line up, else as the part of one slot it fills (free of bank conflicts through swz).
  template <class U, unsigned VU>
  TILEWISE_DEVICE void put_converted(unsigned m, vec<U, VU> const& u) {
    if constexpr (VU % V == 0) {
#pragma unroll
      for (unsigned q = 0; q < VU / V; ++q) {
        vec_t w;
#pragma unroll
        for (unsigned e = 0; e < V; ++e) {
          w.e[e] = T(u.e[q * V + e]);
        }
        slot[swz(m * (VU / V) + q)] = w;
      }
    } else {  // V is a multiple of VU: the VU items lie side by side in one slot
      items<VU> x;
#pragma unroll
      for (unsigned i = 0; i < VU; ++i) {
        x.e[i] = T(u.e[i]);
      }
      items_at<VU>(m * VU) = x;
    }
  }

  /// The reverse of put_converted: vector m of a segment of U, from the stage, converted to U.
  template <class U>
  TILEWISE_DEVICE vec<U, vec_elems<U>> get_converted(unsigned m) {
    constexpr unsigned VU = vec_elems<U>;
    vec<U, VU> u;
    if constexpr (VU % V == 0) {
#pragma unroll
      for (unsigned q = 0; q < VU / V; ++q) {
        vec_t const w = slot[swz(m * (VU / V) + q)];
#pragma unroll
        for (unsigned e = 0; e < V; ++e) {
          u.e[q * V + e] = U(w.e[e]);
        }
      }
    } else {
      items<VU> const x = items_at<VU>(m * VU);
#pragma unroll
      for (unsigned i = 0; i < VU; ++i) {
        u.e[i] = U(x.e[i]);
      }
    }
    return u;
  }

  /// This lane's vectors of a whole segment into the stage by `cp.async` (sm_80 and later),
  /// waiting for them after `in_flight()`.
  template <class F>
  TILEWISE_DEVICE void copy_async(vec_t const* p, unsigned lane, F&& in_flight) {
#pragma unroll
    for (unsigned k = 0; k < R; ++k) {
      auto const to = static_cast<unsigned>(__cvta_generic_to_shared(&slot[swz(32 * k + lane)]));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(p + 32 * k + lane) : "memory");
    }
    in_flight();
    asm volatile("cp.async.wait_all;" ::: "memory");
  }

  /// The fold, in order, of this lane's items (after load()).
  template <class Op>
  TILEWISE_DEVICE T fold(Op& op) const {
    unsigned const lane = threadIdx.x % 32;
    vec_t v             = slot[swz(lane * R)];
    T total             = v.e[0];
#pragma unroll
    for (unsigned i = 1; i < V; ++i) {
      total = op(total, v.e[i]);
    }
#pragma unroll
    for (unsigned k = 1; k < R; ++k) {
      v = slot[swz(lane * R + k)];
#pragma unroll
      for (unsigned i = 0; i < V; ++i) {
        total = op(total, v.e[i]);
      }
    }
    return total;
  }

  /// Replaces this lane's items, in order, by `f(item)`.
  template <class F>
  TILEWISE_DEVICE void transform(F&& f) {
    unsigned const lane = threadIdx.x % 32;
#pragma unroll
    for (unsigned k = 0; k < R; ++k) {
      vec_t v = slot[swz(lane * R + k)];
#pragma unroll
      for (unsigned i = 0; i < V; ++i) {
        v.e[i] = f(v.e[i]);
      }
      slot[swz(lane * R + k)] = v;
    }
  }

  /// How whole aligned segments are stored to `It`: path_of<It>() for outputs of 1 or 2 bytes,
  /// element by element otherwise. Elements of 4 bytes or more, one per lane, make each warp-wide
  /// store write whole 128-byte lines, which measured as fast or faster on the H200 than 16-byte
  /// vectors (2^28 exclusive scans: int32 the same, int64 and double 0.7 % faster, int32 -> int64
  /// and float -> double outputs 2-3 %, int64 -> int32 1.3 %); a warp of 1- or 2-byte elements
  /// writes 32 or 64 bytes (uint8 -> int32 -> int16: vectors 3 % faster).
  template <class It>
  static constexpr path store_path = sizeof(cuda::std::remove_pointer_t<It>) < 4 ? path_of<It>() : path::elements;

  /// Stores the stage to the warp's segment `seg[0, count)` (store_path: 16-byte vectors of T, or
  /// of the output type, converted (store_converting), or element by element). Warp-collective.
  template <class It>
  TILEWISE_DEVICE void store(It seg, unsigned count) {
    unsigned const lane = threadIdx.x % 32;
    __syncwarp();
    if (whole<store_path<It>>(seg, count)) {
      if constexpr (store_path<It> != path::elements) {
        store_converting(seg, lane);  // vectors of T's bits as well: the conversion keeps them
      }
    } else {
#pragma unroll
      for (unsigned m = 0; m < Items; ++m) {
        unsigned const j = 32 * m + lane;
        if (j < count) {
          seg[j] = slot[swz(j / V)].e[j % V];
        }
      }
    }
    __syncwarp();
  }

  /// The stage as a whole segment of U (16-byte aligned): each lane converts its vectors of U
  /// (get_converted) and stores them as 16-byte vectors.
  template <class U>
  TILEWISE_DEVICE void store_converting(U* seg, unsigned lane) {
    constexpr unsigned NU = 32 * Items / vec_elems<U>;  // vectors of U in the segment
    constexpr unsigned RU = (NU + 31) / 32;              // per lane
    auto* p               = reinterpret_cast<vec<U, vec_elems<U>>*>(seg);
#pragma unroll
    for (unsigned k = 0; k < RU; ++k) {
      if (NU % 32 == 0 || 32 * k + lane < NU) {
        p[32 * k + lane] = get_converted<U>(32 * k + lane);
      }
    }
  }
};

}  // namespace tilewise::detail
