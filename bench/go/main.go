// SPDX-License-Identifier: MIT
// bench/go: Go's row in bench/run - goroutines on the Go runtime's
// work-stealing scheduler, with the command line, workloads, sizes, checks
// and output line of the C++ binaries (bench/main.cpp, bench/harness.hpp):
//
//	bench_go --variants
//	bench_go VARIANT WORKLOAD SIZE [--idle]
//	  -> variant workload size seconds allocations tasks peak_rss_kib idle_cpu_seconds
//	exit 0 ok, 1 wrong result, 2 bad arguments, 3 workload not expressed.
//
// How Go expresses them (docs/benchmarks.md):
//
//	fib, qsort,       a goroutine per fork (every child but the last), the
//	skynet, nqueens   last child inline, a sync.WaitGroup join (the
//	                  blocking.hpp shape)
//	spawn             `size` goroutines from the main goroutine, one WaitGroup
//	psum              64 chunk goroutines (as the pools without a partitioner)
//	yield             64 goroutines calling runtime.Gosched() until their
//	                  share of the runs is done
//	pingpong          a goroutine per round sends on an unbuffered channel the
//	                  main goroutine receives from
//
// GOMAXPROCS is BENCH_THREADS (default 2), as the C++ binaries' thread count;
// the main goroutine is one of the goroutines those Ps run. Allocations are
// runtime.MemStats.Mallocs (heap objects); goroutines come from the runtime's
// own free lists and stack pools, which it does not count as heap objects.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

const (
	variant = "Go goroutines"
	// pingpong only: the main goroutine locked to its OS thread
	// (runtime.LockOSThread), so that each round is a hand-off between two
	// threads, as in the C++ rows whose external thread is not the pool's.
	// Unlocked, the goroutine main readies runs next on main's own thread.
	lockedVariant = "Go (main locked to its thread)"
	yieldChains   = 64
	psumChunks    = 64
	sortCutoff    = 32
	randomSeed    = uint32(2463534242)
)

func xorshift32(state *uint32) uint32 {
	*state ^= *state << 13
	*state ^= *state >> 17
	*state ^= *state << 5
	return *state
}

func randomWords(n int) []uint32 {
	v := make([]uint32, n)
	s := randomSeed
	for i := range v {
		v[i] = xorshift32(&s)
	}
	return v
}

// --- the workloads -----------------------------------------------------------

func fib(n uint64) uint64 {
	if n < 2 {
		return n
	}
	var a uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		a = fib(n - 1)
		wg.Done()
	}()
	b := fib(n - 2)
	wg.Wait()
	return a + b
}

func insertionSort(a []int32) {
	for i := 1; i < len(a); i++ {
		x := a[i]
		j := i
		for ; j > 0 && a[j-1] > x; j-- {
			a[j] = a[j-1]
		}
		a[j] = x
	}
}

// Hoare partition around the median of three, as bench/harness.hpp's.
func partition(a []int32) int {
	n := len(a)
	x, y, z := a[0], a[n/2], a[n-1]
	pivot := max32(min32(x, y), min32(max32(x, y), z))
	i, j := 0, n-1
	for {
		for a[i] < pivot {
			i++
		}
		for a[j] > pivot {
			j--
		}
		if i >= j {
			return j + 1
		}
		a[i], a[j] = a[j], a[i]
		i++
		j--
	}
}

func min32(a, b int32) int32 {
	if a < b {
		return a
	}
	return b
}

func max32(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}

func sortPar(a []int32) {
	if len(a) <= sortCutoff {
		insertionSort(a)
		return
	}
	left := partition(a)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		sortPar(a[:left])
		wg.Done()
	}()
	sortPar(a[left:])
	wg.Wait()
}

func skynet(first, leaves uint64) uint64 {
	if leaves == 1 {
		return first
	}
	var sums [10]uint64
	step := leaves / 10
	var wg sync.WaitGroup
	wg.Add(9)
	for i := uint64(0); i < 9; i++ {
		go func(i uint64) {
			sums[i] = skynet(first+i*step, step)
			wg.Done()
		}(i)
	}
	sums[9] = skynet(first+9*step, step)
	wg.Wait()
	total := uint64(0)
	for _, s := range sums {
		total += s
	}
	return total
}

type board struct {
	cols, left, right uint32
	row               int
}

func (b board) free(n int) uint32 { return ^(b.cols | b.left | b.right) & (1<<uint(n) - 1) }
func (b board) place(bit uint32) board {
	return board{b.cols | bit, (b.left | bit) << 1, (b.right | bit) >> 1, b.row + 1}
}

// One goroutine per placed queen; the last placement runs inline.
func queens(b board, n int) uint64 {
	if b.row == n {
		return 1
	}
	var counts [32]uint64
	k := 0
	var wg sync.WaitGroup
	bits := b.free(n)
	for ; bits != 0 && bits&(bits-1) != 0; bits &= bits - 1 {
		wg.Add(1)
		go func(k int, next board) {
			counts[k] = queens(next, n)
			wg.Done()
		}(k, b.place(bits&-bits))
		k++
	}
	if bits != 0 {
		counts[k] = queens(b.place(bits), n)
	}
	wg.Wait()
	total := uint64(0)
	for _, c := range counts {
		total += c
	}
	return total
}

func nqueensNodes(b board, n int) uint64 {
	count := uint64(1)
	if b.row == n {
		return count
	}
	for f := b.free(n); f != 0; f &= f - 1 {
		count += nqueensNodes(b.place(f&-f), n)
	}
	return count
}

// --- one measurement ---------------------------------------------------------

type outcome struct{ checksum, tasks uint64 }

type meter struct {
	seconds float64
	allocs  uint64
}

func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

func (m *meter) measure(timed func() outcome) outcome {
	if m == nil {
		return timed()
	}
	a0 := mallocs()
	t0 := time.Now()
	out := timed()
	m.seconds = time.Since(t0).Seconds()
	m.allocs = mallocs() - a0
	return out
}

func expectedChecksum(workload string, size uint64) uint64 {
	switch workload {
	case "fib":
		a, b := uint64(0), uint64(1)
		for i := uint64(0); i < size; i++ {
			a, b = b, a+b
		}
		return a
	case "qsort", "psum":
		sum := uint64(0)
		s := randomSeed
		for i := uint64(0); i < size; i++ {
			sum += uint64(xorshift32(&s))
		}
		return sum
	case "skynet":
		return size * (size - 1) / 2
	case "nqueens":
		known := map[uint64]uint64{8: 92, 10: 724, 12: 14200, 14: 365596}
		if v, ok := known[size]; ok {
			return v
		}
		return ^uint64(0)
	}
	return size
}

func warmupSize(workload string, size uint64) uint64 {
	switch workload {
	case "fib":
		if size > 5 {
			return size - 5
		}
		return size
	case "nqueens":
		if size > 2 {
			return size - 2
		}
		return size
	}
	if size/10 > 1 {
		return size / 10
	}
	return 1
}

// One run of `workload` at `size`, timed under m when m is not nil; false
// when Go does not express the workload.
func run(workload string, size uint64, m *meter) (outcome, bool) {
	n := int(size)
	switch workload {
	case "fib":
		return m.measure(func() outcome { return outcome{fib(size), expectedChecksum("fib", size+1) - 1} }), true
	case "qsort":
		words := randomWords(n)
		v := make([]int32, n)
		for i, w := range words {
			v[i] = int32(w)
		}
		m.measure(func() outcome { sortPar(v); return outcome{} })
		sum := uint64(0)
		for i, x := range v {
			if i > 0 && v[i-1] > x {
				return outcome{0, 0}, true
			}
			sum += uint64(uint32(x))
		}
		return outcome{sum, 0}, true
	case "skynet":
		return m.measure(func() outcome { return outcome{skynet(0, size), size + (size-1)/9} }), true
	case "nqueens":
		forks := nqueensNodes(board{}, n) - 1
		return m.measure(func() outcome { return outcome{queens(board{}, n), forks} }), true
	case "spawn":
		ran := make([]uint8, n)
		m.measure(func() outcome {
			var wg sync.WaitGroup
			wg.Add(n)
			for i := range ran {
				go func(slot *uint8) {
					*slot = 1
					wg.Done()
				}(&ran[i])
			}
			wg.Wait()
			return outcome{}
		})
		runs := uint64(0)
		for _, r := range ran {
			runs += uint64(r)
		}
		return outcome{runs, size}, true
	case "psum":
		words := randomWords(n)
		return m.measure(func() outcome {
			var partial [psumChunks]uint64
			var wg sync.WaitGroup
			wg.Add(psumChunks)
			for c := 0; c < psumChunks; c++ {
				go func(c int) {
					sum := uint64(0)
					for _, w := range words[n*c/psumChunks : n*(c+1)/psumChunks] {
						sum += uint64(w)
					}
					partial[c] = sum
					wg.Done()
				}(c)
			}
			wg.Wait()
			sum := uint64(0)
			for _, p := range partial {
				sum += p
			}
			return outcome{sum, psumChunks}
		}), true
	case "yield":
		var runs [yieldChains]uint64
		m.measure(func() outcome {
			var wg sync.WaitGroup
			wg.Add(yieldChains)
			for i := uint64(0); i < yieldChains; i++ {
				budget := size*(i+1)/yieldChains - size*i/yieldChains
				go func(r *uint64, budget uint64) {
					for *r++; *r < budget; *r++ {
						runtime.Gosched()
					}
					wg.Done()
				}(&runs[i], budget)
			}
			wg.Wait()
			return outcome{}
		})
		total := uint64(0)
		for _, r := range runs {
			total += r
		}
		return outcome{total, size}, true
	case "pingpong":
		pong := make(chan struct{})
		return m.measure(func() outcome {
			for i := uint64(0); i < size; i++ {
				go func() { pong <- struct{}{} }()
				<-pong
			}
			return outcome{size, size}
		}), true
	}
	return outcome{}, false
}

// CPU seconds of every live thread, each from its own CPU-time clock (as
// bench/harness.hpp, which says why not getrusage: a thread running now has
// its time since the last tick left out of the process totals).
func cpuSeconds() float64 {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return -1
	}
	total := 0.0
	for _, task := range tasks {
		tid, err := strconv.ParseInt(task.Name(), 10, 64)
		if err != nil {
			continue
		}
		clock := (^tid)<<3 | 4 | 2 // per-thread, scheduler runtime: Linux's encoding of a thread's CPU clock
		var t syscall.Timespec
		if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&t)), 0); errno == 0 {
			total += float64(t.Sec) + float64(t.Nsec)*1e-9
		}
	}
	return total
}

// VmHWM of /proc/self/status (bench/main.cpp: not ru_maxrss, which survives execve).
func peakRssKiB() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return -1
}

func main() {
	args := os.Args
	if len(args) == 2 && args[1] == "--variants" {
		fmt.Println(variant)
		fmt.Println(lockedVariant)
		return
	}
	if len(args) < 4 {
		fmt.Fprintf(os.Stderr, "usage: %s --variants | VARIANT WORKLOAD SIZE [--idle]\n", args[0])
		os.Exit(2)
	}
	name, workload := args[1], args[2]
	size, _ := strconv.ParseUint(args[3], 10, 64)
	if name != variant && !(name == lockedVariant && workload == "pingpong") {
		os.Exit(3)
	}
	if name == lockedVariant {
		runtime.LockOSThread()
	}
	threads := 2
	if t, err := strconv.Atoi(os.Getenv("BENCH_THREADS")); err == nil && t > 0 {
		threads = t
	}
	runtime.GOMAXPROCS(threads)
	if _, ok := run(workload, warmupSize(workload, size), nil); !ok {
		os.Exit(3)
	}
	var m meter
	out, _ := run(workload, size, &m)
	idle := -1.0
	if len(args) > 4 && args[4] == "--idle" {
		before := cpuSeconds()
		time.Sleep(time.Second)
		idle = cpuSeconds() - before
	}
	if expected := expectedChecksum(workload, size); out.checksum != expected {
		fmt.Fprintf(os.Stderr, "%s %s %d: wrong result %d, expected %d\n", name, workload, size, out.checksum, expected)
		os.Exit(1)
	}
	fmt.Printf("%s\t%s\t%d\t%.6f\t%d\t%d\t%d\t%.4f\n", name, workload, size, m.seconds, m.allocs, out.tasks, peakRssKiB(), idle)
}
