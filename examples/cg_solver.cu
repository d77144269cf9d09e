/// @file
/// @brief cg_solver: conjugate gradient on the 2-D Poisson equation (5-point stencil, CSR,
///        1024 x 1024 = 1,048,576 unknowns, float64) in ONE persistent cooperative kernel, launched
///        with tilewise::launch_cooperative, its dot products computed by tilewise::grid::reduce;
///        against the same algorithm driven from the host (one launch per SpMV / vector update,
///        cub::DeviceReduce::Sum for the dot products). Two persistent versions: vectors in global
///        memory (grid-stride loops), and one block of 1024 threads per SM keeping x, r and q of
///        its rows in shared memory for the whole solve (only p, which other blocks' SpMV reads,
///        goes through global memory): what a persistent kernel can do and a chain of launches
///        cannot.
///
/// Checks: a 128 x 128 problem solved on the CPU in float64 and by both persistent kernels agree
/// (relative difference <= 1e-6); on the large problem all GPU versions reach a relative
/// residual ||b - A x|| / ||b|| <= 1e-6, computed on the CPU in float64.
/// Exit code: 0 on success, 1 on a failed check or CUDA error, 77 without a CUDA device.
/// The speed-up goal (>= 1.5x) is reported, not enforced (timings depend on the machine).
#include <cooperative_groups.h>

#include <cub/device/device_reduce.cuh>

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cuda/std/functional>

#include <tilewise/grid/launch_cooperative.cuh>
#include <tilewise/grid/reduce.cuh>
#include <tilewise/grid/workspace.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

namespace cg = cooperative_groups;

namespace {

#define CG_CHECK(call)                                                                                    \
  do {                                                                                                    \
    cudaError_t const e_ = (call);                                                                        \
    if (e_ != cudaSuccess) {                                                                              \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                                       \
    }                                                                                                     \
  } while (0)

constexpr unsigned block_size = 256;

/// The 5-point Laplacian on an nx x nx grid (Dirichlet boundary), CSR.
struct csr_host {
  int n = 0;
  std::vector<int> row, col;
  std::vector<double> val;
};

csr_host poisson(int nx) {
  csr_host a;
  a.n = nx * nx;
  a.row.reserve(a.n + 1);
  a.row.push_back(0);
  for (int y = 0; y < nx; ++y) {
    for (int x = 0; x < nx; ++x) {
      int const i = y * nx + x;
      auto add    = [&](int j, double v) {
        a.col.push_back(j);
        a.val.push_back(v);
      };
      if (y > 0) add(i - nx, -1.0);
      if (x > 0) add(i - 1, -1.0);
      add(i, 4.0);
      if (x + 1 < nx) add(i + 1, -1.0);
      if (y + 1 < nx) add(i + nx, -1.0);
      a.row.push_back(int(a.col.size()));
    }
  }
  return a;
}

void spmv_host(csr_host const& a, std::vector<double> const& x, std::vector<double>& y) {
  for (int i = 0; i < a.n; ++i) {
    double s = 0;
    for (int k = a.row[i]; k < a.row[i + 1]; ++k) s += a.val[k] * x[a.col[k]];
    y[i] = s;
  }
}

double norm(std::vector<double> const& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

/// ||x - ref|| / ||ref||.
double relative_difference(std::vector<double> const& x, std::vector<double> const& ref) {
  double d = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) d += (x[i] - ref[i]) * (x[i] - ref[i]);
  return std::sqrt(d) / norm(ref);
}

/// ||b - A x|| / ||b|| in float64 on the CPU.
double relative_residual(csr_host const& a, std::vector<double> const& b, std::vector<double> const& x) {
  std::vector<double> ax(a.n);
  spmv_host(a, x, ax);
  for (int i = 0; i < a.n; ++i) ax[i] = b[i] - ax[i];
  return norm(ax) / norm(b);
}

/// The reference: CG on the CPU in float64 (the same algorithm).
std::vector<double> cg_host(csr_host const& a, std::vector<double> const& b, double tol, int max_iter) {
  std::vector<double> x(a.n, 0.0), r = b, p = b, q(a.n);
  double rr = 0;
  for (double v : b) rr += v * v;
  double const bb = rr;
  for (int k = 0; k < max_iter && rr > tol * tol * bb; ++k) {
    spmv_host(a, p, q);
    double pq = 0;
    for (int i = 0; i < a.n; ++i) pq += p[i] * q[i];
    double const alpha = rr / pq;
    double rr_new      = 0;
    for (int i = 0; i < a.n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      rr_new += r[i] * r[i];
    }
    double const beta = rr_new / rr;
    rr                = rr_new;
    for (int i = 0; i < a.n; ++i) p[i] = r[i] + beta * p[i];
  }
  return x;
}

/// Device arrays of one problem.
struct problem {
  int n;
  int const* row;
  int const* col;
  double const* val;
  double const* b;
  double* x;
  double* r;
  double* p;
  double* q;
};

struct solve_info {
  int iterations;
  double rr;  ///< squared norm of the recurrence residual at the end
};

/// What the persistent kernel runs: the solver, the solver with its dot products replaced by a bare
/// grid.sync() (same memory traffic, fixed iteration count), or only the synchronization of one
/// iteration (2 grid::reduce + 1 grid.sync, no memory work).
enum class mode { solve, no_dots, barriers_only };

template <mode M>
__global__ void __launch_bounds__(block_size) cg_kernel(problem P, int max_iter, double tol2, solve_info* info,
                                                        tilewise::grid::workspace ws) {
  using grid_reduce = tilewise::grid::reduce<double, block_size>;
  __shared__ grid_reduce::temp_storage tmp;
  auto const grid             = cg::this_grid();
  cuda::std::plus<double> const plus{};
  std::size_t const first     = grid.thread_rank();
  std::size_t const stride    = grid.size();
  std::size_t const n         = std::size_t(P.n);
  auto dot = [&](double local) {  // every thread gets the same bits: the loop condition is grid-uniform
    if constexpr (M == mode::no_dots) {
      grid.sync();
      return 1.0;
    } else {
      return grid_reduce{tmp}(grid, local, plus, ws);
    }
  };

  double local = 0;
  if constexpr (M != mode::barriers_only) {
    for (std::size_t i = first; i < n; i += stride) {
      double const bi = P.b[i];
      P.x[i]          = 0;
      P.r[i]          = bi;
      P.p[i]          = bi;
      local += bi * bi;
    }
  }
  double rr       = grid_reduce{tmp}(grid, local, plus, ws);  // also the barrier before the first SpMV
  double const bb = rr;
  int k           = 0;
  for (; k < max_iter && (M != mode::solve || rr > tol2 * bb); ++k) {
    local = 0;
    if constexpr (M != mode::barriers_only) {
      for (std::size_t i = first; i < n; i += stride) {  // q = A p, and p . q
        double s = 0;
        for (int j = P.row[i]; j < P.row[i + 1]; ++j) s += P.val[j] * P.p[P.col[j]];
        P.q[i] = s;
        local += P.p[i] * s;
      }
    }
    double const pq    = dot(local);
    double const alpha = M == mode::solve ? rr / pq : 0.01;
    local              = 0;
    if constexpr (M != mode::barriers_only) {
      for (std::size_t i = first; i < n; i += stride) {  // x += alpha p, r -= alpha q, and r . r
        P.x[i] += alpha * P.p[i];
        double const ri = P.r[i] - alpha * P.q[i];
        P.r[i]          = ri;
        local += ri * ri;
      }
    }
    double const rr_new = dot(local);
    double const beta   = M == mode::solve ? rr_new / rr : 0.5;
    rr                  = M == mode::solve ? rr_new : rr;
    if constexpr (M != mode::barriers_only) {
      for (std::size_t i = first; i < n; i += stride) {  // p = r + beta p
        P.p[i] = P.r[i] + beta * P.p[i];
      }
    }
    grid.sync();  // p complete before the next SpMV reads its neighbours
  }
  if (first == 0) {
    info->iterations = k;
    info->rr         = rr;
  }
}

/// The same solver with the vectors a block's threads own kept on chip across the grid-wide
/// synchronizations, which only a persistent kernel can do: block b owns rows [b * rows,
/// (b + 1) * rows); their x, r and q live in its (dynamic) shared memory for the whole solve,
/// so an iteration moves the matrix, p's reads and p's writes (p alone must be in global memory:
/// the SpMV of other blocks reads it). One block of 1024 threads per SM.
constexpr unsigned onchip_block = 1024;

__global__ void __launch_bounds__(onchip_block, 1)
  cg_onchip_kernel(problem P, int rows, int max_iter, double tol2, solve_info* info, tilewise::grid::workspace ws) {
  using grid_reduce = tilewise::grid::reduce<double, onchip_block>;
  __shared__ grid_reduce::temp_storage tmp;
  extern __shared__ double vectors[];  // x[rows], r[rows], q[rows]
  double* const xs = vectors;
  double* const rs = vectors + rows;
  double* const qs = vectors + 2 * rows;
  auto const grid  = cg::this_grid();
  cuda::std::plus<double> const plus{};
  int const row0  = int(blockIdx.x) * rows;
  int const count = P.n - row0 < rows ? (P.n - row0 > 0 ? P.n - row0 : 0) : rows;
  int const t     = int(threadIdx.x);

  double local = 0;
  for (int i = t; i < count; i += onchip_block) {
    double const bi = P.b[row0 + i];
    xs[i]           = 0;
    rs[i]           = bi;
    P.p[row0 + i]   = bi;
    local += bi * bi;
  }
  double rr       = grid_reduce{tmp}(grid, local, plus, ws);  // also orders p's writes before the SpMV
  double const bb = rr;
  int k           = 0;
  for (; k < max_iter && rr > tol2 * bb; ++k) {
    local = 0;
    for (int i = t; i < count; i += onchip_block) {  // q = A p, and p . q
      int const g = row0 + i;
      double s    = 0;
      for (int j = P.row[g]; j < P.row[g + 1]; ++j) s += P.val[j] * P.p[P.col[j]];
      qs[i] = s;
      local += P.p[g] * s;
    }
    double const alpha = rr / grid_reduce{tmp}(grid, local, plus, ws);
    local              = 0;
    for (int i = t; i < count; i += onchip_block) {  // x += alpha p, r -= alpha q, and r . r
      xs[i] += alpha * P.p[row0 + i];
      double const ri = rs[i] - alpha * qs[i];
      rs[i]           = ri;
      local += ri * ri;
    }
    double const rr_new = grid_reduce{tmp}(grid, local, plus, ws);  // also: every p read before it is rewritten
    double const beta   = rr_new / rr;
    rr                  = rr_new;
    for (int i = t; i < count; i += onchip_block) {  // p = r + beta p
      P.p[row0 + i] = rs[i] + beta * P.p[row0 + i];
    }
    grid.sync();  // p complete before the next SpMV reads its neighbours
  }
  for (int i = t; i < count; i += onchip_block) {
    P.x[row0 + i] = xs[i];
  }
  if (blockIdx.x == 0 && t == 0) {
    info->iterations = k;
    info->rr         = rr;
  }
}

// ---- the host-driven version: one launch per operation, CUB for the dot products -----------------

__global__ void init_kernel(problem P) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < std::size_t(P.n);
       i += std::size_t(gridDim.x) * blockDim.x) {
    P.x[i] = 0;
    P.r[i] = P.b[i];
    P.p[i] = P.b[i];
  }
}

__global__ void spmv_kernel(problem P) {  // q = A p
  std::size_t const i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < std::size_t(P.n)) {
    double s = 0;
    for (int j = P.row[i]; j < P.row[i + 1]; ++j) s += P.val[j] * P.p[P.col[j]];
    P.q[i] = s;
  }
}

/// s[0] = p . q, s[1 + k % 2] = r . r of iteration k (ping-pong, so a kernel reads the old while
/// the new is written by the next reduction).
__global__ void update_xr_kernel(problem P, double const* s, int k) {  // x += alpha p, r -= alpha q
  std::size_t const i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  double const alpha  = s[1 + k % 2] / s[0];
  if (i < std::size_t(P.n)) {
    P.x[i] += alpha * P.p[i];
    P.r[i] -= alpha * P.q[i];
  }
}

__global__ void update_p_kernel(problem P, double const* s, int k) {  // p = r + beta p
  std::size_t const i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  double const beta   = s[1 + (k + 1) % 2] / s[1 + k % 2];
  if (i < std::size_t(P.n)) {
    P.p[i] = P.r[i] + beta * P.p[i];
  }
}

struct product {
  double const* a;
  double const* b;
  __host__ __device__ double operator()(int i) const { return a[i] * b[i]; }
};

struct host_driven {
  problem P;
  double* s;
  void* temp;
  std::size_t temp_bytes;

  auto dot_input(double const* a, double const* b) const {
    return thrust::make_transform_iterator(thrust::make_counting_iterator<int>(0), product{a, b});
  }
  void dot(double const* a, double const* b, double* out) {
    CG_CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, dot_input(a, b), out, P.n));
  }
  unsigned blocks() const { return unsigned((P.n + block_size - 1) / block_size); }

  /// `iterations` CG iterations; parts: 1 = all, 2 = SpMV only, 3 = the two dot products only.
  void run(int iterations, int parts = 1) {
    if (parts == 1) {
      init_kernel<<<blocks(), block_size>>>(P);
      CG_CHECK(cudaGetLastError());
      dot(P.b, P.b, s + 1);
    }
    for (int k = 0; k < iterations; ++k) {
      if (parts != 3) {
        spmv_kernel<<<blocks(), block_size>>>(P);
        CG_CHECK(cudaGetLastError());
      }
      if (parts != 2) dot(P.p, P.q, s);
      if (parts == 1) {
        update_xr_kernel<<<blocks(), block_size>>>(P, s, k);
        CG_CHECK(cudaGetLastError());
      }
      if (parts != 2) dot(P.r, P.r, s + 1 + (k + 1) % 2);
      if (parts == 1) {
        update_p_kernel<<<blocks(), block_size>>>(P, s, k);
        CG_CHECK(cudaGetLastError());
      }
    }
  }
};

// ---- driver ----------------------------------------------------------------------------------------

struct device_problem {
  csr_host a;
  std::vector<double> b;
  std::vector<void*> allocations;
  problem P{};

  explicit device_problem(int nx) : a(poisson(nx)), b(std::size_t(nx) * nx, 1.0) {
    P.n = a.n;
    P.row = upload(a.row);
    P.col = upload(a.col);
    P.val = upload(a.val);
    P.b   = upload(b);
    P.x   = alloc<double>(a.n);
    P.r   = alloc<double>(a.n);
    P.p   = alloc<double>(a.n);
    P.q   = alloc<double>(a.n);
  }
  ~device_problem() {
    for (void* p : allocations) cudaFree(p);
  }
  template <class T>
  T* alloc(std::size_t n) {
    void* p = nullptr;
    CG_CHECK(cudaMalloc(&p, n * sizeof(T)));
    allocations.push_back(p);
    return static_cast<T*>(p);
  }
  template <class T>
  T const* upload(std::vector<T> const& h) {
    T* d = alloc<T>(h.size());
    CG_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
  }
  std::vector<double> download_x() const {
    std::vector<double> x(std::size_t(a.n));
    CG_CHECK(cudaMemcpy(x.data(), P.x, x.size() * sizeof(double), cudaMemcpyDeviceToHost));
    return x;
  }
};

/// Milliseconds between two events around `work()` on the default stream (synchronizes).
template <class Work>
float elapsed_ms(Work const& work) {
  cudaEvent_t start, stop;
  CG_CHECK(cudaEventCreate(&start));
  CG_CHECK(cudaEventCreate(&stop));
  CG_CHECK(cudaEventRecord(start));
  work();
  CG_CHECK(cudaGetLastError());
  CG_CHECK(cudaEventRecord(stop));
  CG_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CG_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CG_CHECK(cudaEventDestroy(start));
  CG_CHECK(cudaEventDestroy(stop));
  return ms;
}

template <mode M>
float run_persistent(device_problem& d, int max_iter, double tol, tilewise::grid::workspace ws, int grid,
                     solve_info* d_info, solve_info& info) {
  float const ms = elapsed_ms([&] {
    tilewise::launch_cooperative(cg_kernel<M>, tilewise::cooperative_grid{grid}, dim3(block_size), 0, cudaStream_t{},
                                 d.P, max_iter, tol * tol, d_info, ws);
  });
  CG_CHECK(cudaMemcpy(&info, d_info, sizeof info, cudaMemcpyDeviceToHost));
  return ms;
}

/// Launches cg_onchip_kernel on one block per SM if the rows' x, r and q fit in shared memory;
/// returns the time in ms, or a negative value when they do not fit.
float run_onchip(device_problem& d, int max_iter, double tol, tilewise::grid::workspace ws, solve_info* d_info,
                 solve_info& info, int& grid_out) {
  int dev = 0, sms = 0, smem_max = 0;
  CG_CHECK(cudaGetDevice(&dev));
  CG_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CG_CHECK(cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  int const rows          = (d.P.n + sms - 1) / sms;
  std::size_t const bytes = 3 * std::size_t(rows) * sizeof(double);
  cudaFuncAttributes attr{};
  CG_CHECK(cudaFuncGetAttributes(&attr, cg_onchip_kernel));
  if (bytes + attr.sharedSizeBytes > std::size_t(smem_max)) return -1.f;
  CG_CHECK(cudaFuncSetAttribute(cg_onchip_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  int const grid = (d.P.n + rows - 1) / rows;
  if (tilewise::max_cooperative_grid(cg_onchip_kernel, dim3(onchip_block), bytes) < grid) return -1.f;
  grid_out       = grid;
  float const ms = elapsed_ms([&] {
    tilewise::launch_cooperative(cg_onchip_kernel, tilewise::cooperative_grid{grid}, dim3(onchip_block), bytes,
                                 cudaStream_t{}, d.P, rows, max_iter, tol * tol, d_info, ws);
  });
  CG_CHECK(cudaMemcpy(&info, d_info, sizeof info, cudaMemcpyDeviceToHost));
  return ms;
}

float run_host(host_driven& h, int iterations, int parts) {
  return elapsed_ms([&] { h.run(iterations, parts); });
}

int run() {
  constexpr int nx_small = 128, nx = 1024, max_iter = 20000;
  constexpr double tol   = 1e-7;  // on the recurrence residual; the check asks 1e-6 of the true one
  bool ok                = true;

  int const grid = tilewise::max_cooperative_grid(cg_kernel<mode::solve>, dim3(block_size));
  auto const ws  = tilewise::grid::make_workspace<double>(grid);
  solve_info* d_info = nullptr;
  CG_CHECK(cudaMalloc(&d_info, sizeof(solve_info)));

  // 1. Small problem: the persistent kernel against CG on the CPU in float64, both solved tightly.
  {
    device_problem d(nx_small);
    solve_info info{};
    run_persistent<mode::solve>(d, max_iter, 1e-12, ws, grid, d_info, info);
    auto const x_gpu  = d.download_x();
    auto const x_cpu  = cg_host(d.a, d.b, 1e-12, max_iter);
    double const rel  = relative_difference(x_gpu, x_cpu);
    bool const pass   = rel <= 1e-6;
    ok &= pass;
    std::printf("check %d x %d against a float64 CPU solve: %d iterations, relative difference %.2e  %s\n", nx_small,
                nx_small, info.iterations, rel, pass ? "ok" : "FAILED");
    int g = 0;
    CG_CHECK(cudaMemset(d.P.x, 0xA5, x_cpu.size() * sizeof(double)));  // poison: the on-chip kernel writes x last
    if (run_onchip(d, max_iter, 1e-12, ws, d_info, info, g) >= 0) {
      double const rel2 = relative_difference(d.download_x(), x_cpu);
      bool const pass2  = rel2 <= 1e-6;
      ok &= pass2;
      std::printf("check %d x %d, vectors on chip (%d blocks): %d iterations, relative difference %.2e  %s\n", nx_small,
                  nx_small, g, info.iterations, rel2, pass2 ? "ok" : "FAILED");
    }
  }

  // 2. Large problem: timed, both versions checked by their true residual on the CPU.
  device_problem d(nx);
  std::printf("cg_solver: 2-D Poisson %d x %d (%d unknowns, %zu nonzeros), CSR, float64, tolerance %.0e\n", nx, nx,
              d.a.n, d.a.val.size(), tol);
  std::printf("persistent kernel: %d blocks of %u threads (launch_cooperative), %s\n\n", grid, block_size,
              "dot products by tilewise::grid::reduce");
  solve_info info{};
  run_persistent<mode::solve>(d, max_iter, tol, ws, grid, d_info, info);  // warm-up
  float const ms_persistent = run_persistent<mode::solve>(d, max_iter, tol, ws, grid, d_info, info);
  int const iterations      = info.iterations;
  double const res_persistent = relative_residual(d.a, d.b, d.download_x());

  host_driven h{d.P, nullptr, nullptr, 0};
  CG_CHECK(cudaMalloc(&h.s, 3 * sizeof(double)));
  CG_CHECK(cub::DeviceReduce::Sum(nullptr, h.temp_bytes, h.dot_input(d.P.p, d.P.q), h.s, d.P.n));
  CG_CHECK(cudaMalloc(&h.temp, h.temp_bytes));
  run_host(h, 10, 1);  // warm-up
  float const ms_host    = run_host(h, iterations, 1);  // the same iteration count, no convergence checks
  double const res_host  = relative_residual(d.a, d.b, d.download_x());
  float const ms_spmv    = run_host(h, iterations, 2);
  float const ms_dots    = run_host(h, iterations, 3);

  int grid_chip        = 0;
  solve_info chip{};
  run_onchip(d, max_iter, tol, ws, d_info, chip, grid_chip);  // warm-up
  float const ms_chip  = run_onchip(d, max_iter, tol, ws, d_info, chip, grid_chip);
  bool const have_chip = ms_chip >= 0;
  double const res_chip = have_chip ? relative_residual(d.a, d.b, d.download_x()) : 0.0;

  solve_info other{};
  float const ms_no_dots  = run_persistent<mode::no_dots>(d, iterations, 0, ws, grid, d_info, other);
  float const ms_barriers = run_persistent<mode::barriers_only>(d, iterations, 0, ws, grid, d_info, other);

  auto per_it = [&](float ms) { return 1000.0 * ms / iterations; };
  std::printf("| version | iterations | ms total | us / iteration | speed-up | relative residual |\n");
  std::printf("|---|---|---|---|---|---|\n");
  std::printf("| host-driven (5 launches + 2 CUB DeviceReduce per iteration) | %d | %.2f | %.2f | 1.00 | %.2e |\n",
              iterations, ms_host, per_it(ms_host), res_host);
  std::printf("| persistent cooperative kernel (grid::reduce), vectors in global memory | %d | %.2f | %.2f | %.2f | %.2e |\n",
              iterations, ms_persistent, per_it(ms_persistent), ms_host / ms_persistent, res_persistent);
  if (have_chip) {
    std::printf("| persistent, x / r / q of each block's rows in shared memory (%d blocks of %u) | %d | %.2f | %.2f | %.2f | "
                "%.2e |\n",
                grid_chip, onchip_block, chip.iterations, ms_chip, 1000.0 * ms_chip / chip.iterations,
                ms_host / ms_chip * chip.iterations / iterations, res_chip);
  } else {
    std::printf("| persistent, vectors on chip | - | does not fit in shared memory | | | |\n");
  }
  std::printf("\n");
  std::printf("| where the time goes (us / iteration) | us |\n|---|---|\n");
  std::printf("| persistent, dots replaced by a bare grid.sync() (same memory traffic) | %.2f |\n", per_it(ms_no_dots));
  std::printf("| persistent, only its synchronization (2 grid::reduce + 1 grid.sync, no memory work) | %.2f |\n",
              per_it(ms_barriers));
  std::printf("| host-driven, SpMV launches only | %.2f |\n", per_it(ms_spmv));
  std::printf("| host-driven, the 2 CUB dot products only | %.2f |\n\n", per_it(ms_dots));

  bool const converged = iterations < max_iter;
  bool const pass_p    = converged && res_persistent <= 1e-6;
  bool const pass_h    = res_host <= 1e-6;
  bool const pass_c    = !have_chip || (chip.iterations < max_iter && res_chip <= 1e-6);
  ok &= pass_p && pass_h && pass_c;
  std::printf("persistent: %s (residual %.2e <= 1e-6)\nhost-driven: %s (residual %.2e <= 1e-6)\n",
              pass_p ? "ok" : "FAILED", res_persistent, pass_h ? "ok" : "FAILED", res_host);
  if (have_chip) {
    std::printf("persistent, vectors on chip: %s (residual %.2e <= 1e-6)\n", pass_c ? "ok" : "FAILED", res_chip);
  }
  // Per iteration (the on-chip solve may stop an iteration earlier or later: rounding differs).
  double const best = have_chip ? std::max(double(ms_host) / ms_persistent,
                                           double(ms_host) / ms_chip * chip.iterations / iterations)
                                : double(ms_host) / ms_persistent;
  std::printf("speed-up goal >= 1.5x: %s (%.2fx, the faster persistent version, per iteration)\n",
              best >= 1.5 ? "met" : "not met", best);

  CG_CHECK(cudaFree(h.s));
  CG_CHECK(cudaFree(h.temp));
  CG_CHECK(cudaFree(d_info));
  return ok ? 0 : 1;
}

}  // namespace

int main() {
  int count               = 0;
  cudaError_t const error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    std::printf("cg_solver: no CUDA device (%s), skipping\n",
                error != cudaSuccess ? cudaGetErrorString(error) : "0 devices");
    return 77;
  }
  try {
    return run();
  } catch (std::exception const& e) {
    std::fprintf(stderr, "cg_solver: %s\n", e.what());
    return 1;
  }
}
