/// @file
/// @brief Decoupled look-back over the tile records of a launch (detail::tile_status): the walk
///        (detail::look_back: the combination of the values of all tiles before a tile, by one
///        warp) and the block-wide step the single-pass algorithms share (detail::look_back_prefix:
///        publish the aggregate, look back, publish the inclusive prefix, broadcast the prefix).
#pragma once

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/device/tile_status.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/detail/lane_reduce.cuh>
#include <tilewise/detail/maybe.cuh>
#include <tilewise/detail/tuning.cuh>

namespace tilewise::detail {

/// Decoupled look-back (Merrill & Garland 2016) by one full warp of the block that owns `tile`
/// (tile >= 1): the combination, in tile order, of the values of all tiles before `tile`. Each
/// step reads a window of the 32 preceding records, waits until every one is written, and stops
/// at the nearest inclusive one; op need not commute. The result is on every lane.
/// `first_delay_ns` > 0 sleeps that long before the first window and `PollDelayNs` > 0 between
/// polls of a window not yet complete (instead of tile_status::back_off), as CUB's sm_90 scan
/// tunings do; `delay` false (uniform over the warp) skips both. 0 and 0 is the undelayed path.
/// The first sleep is what pays on large grids: by the time it ends the predecessors have mostly
/// turned inclusive, so one window ends the walk instead of several of partial records.
template <unsigned PollDelayNs = 0, class T, class Op>
TILEWISE_DEVICE T look_back(tile_status<T> const& s, long long tile, Op& op, bool delay = false,
                            unsigned first_delay_ns = 0) {
  tile_lanes<32> const l;
  unsigned const lane = l.rank;
  T acc{};
  bool have     = false;
  long long end = tile;  // window [end - 32, end)
  if (delay && first_delay_ns > 0) {
    __nanosleep(first_delay_ns);
  }
  while (true) {
    long long const i = end - 32 + lane;
    status_entry<T> e{};
    bool ok = i < 0;
    if (!ok) {
      e  = s.load(i);
      ok = s.ready(e);
    }
    for (unsigned k = 0; !__all_sync(0xFFFFFFFFu, ok); ++k) {
      if (PollDelayNs > 0 && delay) {
        __nanosleep(PollDelayNs);
      } else {
        tile_status<T>::back_off(k);
      }
      if (!ok) {
        e  = s.load(i);
        ok = s.ready(e);
      }
    }
    unsigned const incl  = __ballot_sync(0xFFFFFFFFu, i >= 0 && tile_status<T>::is_inclusive(e));
    // Lanes [first, 32) take part: from the nearest inclusive record (tile 0's always is).
    unsigned const first = incl ? 31 - __clz(incl) : (end < 32 ? unsigned(32 - end) : 0u);
    T const moved        = l.shfl(e.value, lane + first < 32 ? lane + first : 31u);
    T const window       = reduce_tile_partial(l, moved, op, 32 - first);
    acc                  = have ? T(op(window, acc)) : window;
    have                 = true;
    if (incl) {
      return acc;
    }
    end -= 32;
  }
}

/// The tile prefix of a single-pass kernel as one block-wide step (as CUB's TilePrefixCallbackOp,
/// which its scan, select and reduce-by-key agents share): thread 0 publishes the tile's aggregate
/// (tile 0: as its inclusive prefix), warp 0 looks back over the earlier tiles' records with the
/// sleeps of `Sleeps::value.look_back` (detail::look_back), thread 0 publishes the tile's inclusive
/// prefix and hands the exclusive prefix to the block through shared memory.
template <class Sleeps, class T, class Op>
struct look_back_prefix {
  using value_t = maybe_t<Op, T>;
  struct temp_storage {
    value_t prefix;
  };

  /// The combination of all tiles before `tile` (tile 0: `seed`), on every thread. Block-collective:
  /// one barrier; `status` and `tile` uniform over the block.
  TILEWISE_DEVICE static value_t run(temp_storage& tmp, tile_status<T> const& status, long long tile,
                                     T const& aggregate, value_t const& seed, Op& op) {
    constexpr look_back_tuning lb = Sleeps::value.look_back;
    if (threadIdx.x == 0) {
      status.publish(tile, tile == 0 ? status_inclusive : status_partial, aggregate);
    }
    if (threadIdx.x / 32 == 0) {
      value_t prefix;
      if (tile == 0) {
        prefix = seed;
      } else {
        bool delay     = true;  // both uniform over the grid
        unsigned first = lb.first_delay_ns;
        if constexpr (lb.delay_min_tiles > 0) {
          delay = gridDim.x >= lb.delay_min_tiles;
        }
        if constexpr (lb.long_delay_ns > 0) {
          if (gridDim.x >= lb.long_delay_min_tiles) {
            first = lb.long_delay_ns;
          }
        }
        T const p = look_back<lb.poll_delay_ns>(status, tile, op, delay, first);
        if (threadIdx.x == 0) {
          status.publish(tile, status_inclusive, T(op(p, aggregate)));
        }
        prefix = make_maybe<Op, T>(p, true);
      }
      if (threadIdx.x == 0) {
        tmp.prefix = prefix;
      }
    }
    __syncthreads();
    return tmp.prefix;
  }
};

}  // namespace tilewise::detail
