/// @file
/// @brief detail::gpu_word: device-scope loads, stores and atomics on 64-bit words in global
///        memory (temp storage, grid workspaces), in their `.global` PTX forms.
///
/// Why not cuda::atomic_ref: on a generic address it compiles to a test of the address space (a
/// branch to a shared-memory CAS loop beside every atomic); its acquire loads put `CCTL.IVALL`
/// (invalidate L1) behind every poll, and its release stores `MEMBAR.ALL.GPU` before every store
/// (the measurements: `docs/tuning.md#grid-reduce`, `docs/tuning.md#tile-records-and-look-back`).
/// Every access is one line of PTX, the acquire fence too: `<cuda/ptx>`, which offers it, adds
/// about half a second to the compile of every translation unit that includes a device-wide
/// algorithm.
#pragma once

#include <tilewise/detail/config.cuh>

namespace tilewise::detail {

struct gpu_word {
  using u64 = unsigned long long;
  TILEWISE_DEVICE static u64 add_relaxed(u64* p, u64 v) {
    u64 old;
    asm volatile("atom.relaxed.gpu.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
    return old;
  }
  TILEWISE_DEVICE static u64 add_release(u64* p, u64 v) {
    u64 old;
    asm volatile("atom.release.gpu.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
    return old;
  }
  TILEWISE_DEVICE static u64 add_acq_rel(u64* p, u64 v) {
    u64 old;
    asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
    return old;
  }
  TILEWISE_DEVICE static void store_relaxed(u64* p, u64 v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  }
  TILEWISE_DEVICE static void store_release(u64* p, u64 v) {
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  }
  TILEWISE_DEVICE static u64 load_relaxed(u64 const* p) {
    u64 v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
  }
  TILEWISE_DEVICE static u64 load_acquire(u64 const* p) {
    u64 v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
  }
  /// Two adjacent words (16-byte aligned) in one access. The PTX memory model treats a vector
  /// access as one access per element in no given order; an aligned 16-byte access is one
  /// transaction on sm_70 and later, which is what keeps the pair together (as CUB's
  /// ScanTileState relies on for its 16-byte records).
  TILEWISE_DEVICE static void store_relaxed_pair(u64* p, u64 a, u64 b) {
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
  }
  TILEWISE_DEVICE static void load_relaxed_pair(u64 const* p, u64& a, u64& b) {
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
  }
  /// Spins until done(*p) and returns that value, acquired: relaxed loads then one acquire fence
  /// (sm_90: fence.acquire, which invalidates L1 and waits for nothing), or acquire loads before.
  template <class Done>
  TILEWISE_DEVICE static u64 spin(u64 const* p, Done done) {
    u64 seen;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    do {
      seen = load_relaxed(p);
    } while (!done(seen));
    asm volatile("fence.acquire.gpu;" ::: "memory");
#else
    do {
      seen = load_acquire(p);
    } while (!done(seen));
#endif
    return seen;
  }
};

}  // namespace tilewise::detail
