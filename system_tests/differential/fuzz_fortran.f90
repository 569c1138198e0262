! Differential fuzzer of einrel's Fortran module (engine/fortran/src/einrel.f90) against plain loops.
!
!   mpiexec.mpich -n RANKS fuzz_fortran CASES SEED
!
! Case i (seeded SEED + i, so `fuzz_fortran 1 SEED+i` reruns it alone, at the same number of ranks) draws
! one of a small family of graphs over 2-d fields, f64 or f32:
!   a matmul          C = einsum("ij,jk->ik", A, B)
!   an element-wise   C = einsum("ij,ij->ij", A, B, join=J)   (J: mul add sub max min sqdiff absdiff)
!   row sums          R = einsum("ij->i", A)
! with, after a matmul or an element-wise join, now and then the row sums R of C as well. Every bound tensor
! is cut into slabs along a random one of its dimensions, one slab per rank (uneven, some empty), and each
! rank binds its slab as a Fortran array by the module's index convention: the C-order box [lo, hi) of
! extents (e1, e2) is the array a(e2, e1). The program is executed twice (new inputs in between) and every
! rank compares its output slabs with a reference in plain loops.
!
! Negative cases, on every rank holding a non-square 2-d slab: the box written in Fortran order (extents
! not reversed: the array's own shape) and a box of another size than the array must each give
! EINREL_INVALID_ARGUMENT with a message of their own from einrel_last_error().
!
! The module's own contracts: names are passed in longer variables (trailing blanks trimmed); odd cases give
! boxes as 64-bit integers and create their program twice into one variable (the first one freed by the
! second creation, so executing a copy of it is refused); a failed parse leaves a null graph handle.
!
! One line per failed case (its seed, the first failure, the graph), then "N passed, M failed" on rank 0;
! exit status 1 if any failed.
program fuzz_fortran
  use, intrinsic :: iso_c_binding, only: c_double, c_float, c_associated
  use, intrinsic :: iso_fortran_env, only: int64
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
  use mpi
  use einrel
  implicit none

  integer, parameter :: max_tensors = 4, message_len = 400, text_len = 512
  integer, parameter :: matmul_case = 1, elementwise_case = 2, rowsum_case = 3
  character(len=7), parameter :: join_names(7) = [character(len=7) :: 'mul', 'add', 'sub', 'max', 'min', &
                                                  'sqdiff', 'absdiff']

  ! One tensor of the graph: its C-order shape, its whole values (val(i+1, j+1) is T[i, j], not the Fortran
  ! memory order) with error bounds, and this rank's slab of it.
  type tensor_t
    character(len=1) :: name
    integer :: rank = 2, dims(2) = 1
    logical :: input = .false., output = .false.
    real(c_double), allocatable :: val(:, :), err(:, :)
    integer :: lo(2) = 0, hi(2) = 0          ! this rank's C-order box
    logical :: empty = .true.
    real(c_double), allocatable :: d1(:), d2(:, :)
    real(c_float), allocatable :: s1(:), s2(:, :)
  end type tensor_t

  type(tensor_t), target :: t(max_tensors)
  type(einrel_program) :: program_of_case
  integer :: ntensors, family, join, me, ranks, ierr, provided, icase, cases, passed
  integer(int64) :: seed, state
  logical :: f32, with_rowsum, failed, wide_bounds
  real(c_double) :: eps
  character(len=text_len) :: text
  character(len=message_len) :: message
  character(len=32) :: arg

  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, ranks, ierr)
  if (command_argument_count() < 2) then
    if (me == 0) print '(a)', 'usage: fuzz_fortran CASES SEED'
    call MPI_Finalize(ierr)
    stop 2
  end if
  call get_command_argument(1, arg); read(arg, *) cases
  call get_command_argument(2, arg); read(arg, *) seed
  passed = 0
  do icase = 0, cases - 1
    if (fuzz_case(seed + icase)) passed = passed + 1
  end do
  if (me == 0) print '(i0, a, i0, a)', passed, ' passed, ', cases - passed, ' failed'
  call MPI_Finalize(ierr)
  if (passed /= cases) stop 1

contains

  ! ------------------------------------------------------------------------------------------------------
  ! Random numbers: Park-Miller (minstd), the same sequence on every rank.

  subroutine seed_rng(s)
    integer(int64), intent(in) :: s
    integer :: i
    state = modulo(s, 2147483646_int64) + 1
    do i = 1, 8
      state = modulo(state * 48271_int64, 2147483647_int64)
    end do
  end subroutine seed_rng

  ! A uniform integer in [lo, hi].
  integer function uniform(lo, hi)
    integer, intent(in) :: lo, hi
    state = modulo(state * 48271_int64, 2147483647_int64)
    uniform = lo + int(modulo(state, int(hi - lo + 1, int64)))
  end function uniform

  logical function chance(percent)
    integer, intent(in) :: percent
    chance = uniform(0, 99) < percent
  end function chance

  ! A value in [-1, 1), an f32 number in an f32 case.
  real(c_double) function draw_value()
    draw_value = real(uniform(0, 2**30 - 1), c_double) / 2.0d0**29 - 1
    if (f32) draw_value = real(real(draw_value, c_float), c_double)
  end function draw_value

  ! ------------------------------------------------------------------------------------------------------
  ! The case: its graph, its slabs.

  subroutine add_tensor(i, name, rank, dims, input, output)
    integer, intent(in) :: i, rank, dims(2)
    character(len=1), intent(in) :: name
    logical, intent(in) :: input, output
    t(i)%name = name
    t(i)%rank = rank
    t(i)%dims = dims
    t(i)%input = input
    t(i)%output = output
    allocate(t(i)%val(dims(1), dims(2)), t(i)%err(dims(1), dims(2)))
    t(i)%err = 0
  end subroutine add_tensor

  ! Tensors: 1 A, 2 B, 3 C, 4 R (those of the family), and the graph text.
  subroutine random_graph()
    integer :: n, m, k
    character(len=3) :: dtype
    character(len=1), parameter :: nl = new_line('a')
    n = uniform(1, 9); m = uniform(1, 9); k = uniform(1, 9)
    f32 = chance(50)
    dtype = merge('f32', 'f64', f32)
    family = uniform(1, 3)
    join = uniform(1, 7)
    with_rowsum = chance(50)
    if (family == rowsum_case) with_rowsum = .true.
    eps = merge(real(epsilon(1.0_c_float), c_double), epsilon(1.0_c_double), f32) / 2
    call add_tensor(1, 'A', 2, [n, m], .true., .false.)
    ntensors = 1
    select case (family)
    case (matmul_case)
      call add_tensor(2, 'B', 2, [m, k], .true., .false.)
      call add_tensor(3, 'C', 2, [n, k], .false., .true.)
      text = 'input A ' // dtype // shape_text([n, m]) // nl // 'input B ' // dtype // shape_text([m, k]) // nl // &
             'C = einsum("ij,jk->ik", A, B)' // nl
      ntensors = 3
    case (elementwise_case)
      call add_tensor(2, 'B', 2, [n, m], .true., .false.)
      call add_tensor(3, 'C', 2, [n, m], .false., .true.)
      text = 'input A ' // dtype // shape_text([n, m]) // nl // 'input B ' // dtype // shape_text([n, m]) // nl // &
             'C = einsum("ij,ij->ij", A, B, join=' // trim(join_names(join)) // ')' // nl
      ntensors = 3
    case default
      text = 'input A ' // dtype // shape_text([n, m]) // nl
    end select
    if (with_rowsum) then
      ntensors = ntensors + 1
      call add_tensor(ntensors, 'R', 1, [n, 1], .false., .true.)
      text = trim(text) // 'R = einsum("ij->i", ' // t(ntensors - 1)%name // ')' // nl
    end if
    if (family == rowsum_case) then
      text = trim(text) // 'output R' // nl
    else if (with_rowsum) then
      text = trim(text) // 'output C, R' // nl
    else
      text = trim(text) // 'output C' // nl
    end if
  end subroutine random_graph

  ! '[n,m]'
  function shape_text(dims) result(s)
    integer, intent(in) :: dims(2)
    character(len=:), allocatable :: s
    character(len=24) :: buffer
    write(buffer, '(a, i0, a, i0, a)') '[', dims(1), ',', dims(2), ']'
    s = trim(buffer)
  end function shape_text

  ! This rank's slab of tensor x: the tensor cut along a random dimension at random points (one slab per
  ! rank, uneven, possibly empty), and its Fortran array, a(e2, e1) for the C-order box of extents (e1, e2).
  subroutine make_slab(x)
    type(tensor_t), intent(inout) :: x
    integer :: axis, cuts(0:ranks), r, j, v, e(2)
    axis = 1
    if (x%rank == 2) axis = uniform(1, 2)
    cuts(0) = 0
    cuts(ranks) = x%dims(axis)
    do r = 1, ranks - 1                       ! sorted random cut points
      v = uniform(0, x%dims(axis))
      j = r
      do while (j > 1)
        if (cuts(j - 1) <= v) exit
        cuts(j) = cuts(j - 1)
        j = j - 1
      end do
      cuts(j) = v
    end do
    x%lo = 0
    x%hi = x%dims
    x%lo(axis) = cuts(me)
    x%hi(axis) = cuts(me + 1)
    e = x%hi - x%lo
    x%empty = product(e(1:x%rank)) == 0
    if (x%empty) return
    if (x%rank == 1 .and. f32) allocate(x%s1(e(1)))
    if (x%rank == 1 .and. .not. f32) allocate(x%d1(e(1)))
    if (x%rank == 2 .and. f32) allocate(x%s2(e(2), e(1)))
    if (x%rank == 2 .and. .not. f32) allocate(x%d2(e(2), e(1)))
  end subroutine make_slab

  ! Copies tensor x's values into this rank's slab, by the index convention: T[i, j] is a(j - lo2 + 1, i - lo1 + 1).
  subroutine fill_slab(x)
    type(tensor_t), intent(inout) :: x
    integer :: i, j
    if (x%empty) return
    do i = x%lo(1), x%hi(1) - 1
      if (x%rank == 1) then
        if (f32) x%s1(i - x%lo(1) + 1) = real(x%val(i + 1, 1), c_float)
        if (.not. f32) x%d1(i - x%lo(1) + 1) = x%val(i + 1, 1)
        cycle
      end if
      do j = x%lo(2), x%hi(2) - 1
        if (f32) x%s2(j - x%lo(2) + 1, i - x%lo(1) + 1) = real(x%val(i + 1, j + 1), c_float)
        if (.not. f32) x%d2(j - x%lo(2) + 1, i - x%lo(1) + 1) = x%val(i + 1, j + 1)
      end do
    end do
  end subroutine fill_slab

  ! NaN in every element of an output slab, so that one einrel does not write is seen.
  subroutine poison_slab(x)
    type(tensor_t), intent(inout) :: x
    if (allocated(x%s1)) x%s1 = ieee_value(1.0_c_float, ieee_quiet_nan)
    if (allocated(x%d1)) x%d1 = ieee_value(1.0_c_double, ieee_quiet_nan)
    if (allocated(x%s2)) x%s2 = ieee_value(1.0_c_float, ieee_quiet_nan)
    if (allocated(x%d2)) x%d2 = ieee_value(1.0_c_double, ieee_quiet_nan)
  end subroutine poison_slab

  ! Binds x's slab with box [lo, hi) (an input or output), or says this rank has none. The name is passed in a
  ! longer variable (trailing blanks, which the module trims), and in odd cases the box as 64-bit integers.
  integer function bind(x, lo, hi) result(status)
    type(tensor_t), intent(inout), target :: x
    integer, intent(in) :: lo(:), hi(:)
    integer :: dtype
    character(len=12) :: padded
    padded = x%name
    dtype = merge(EINREL_F32, EINREL_F64, f32)
    if (x%empty) then
      status = einrel_set_no_piece(program_of_case, padded, x%input, dtype, x%rank)
    else if (wide_bounds) then
      status = bind_wide(x, padded, int(lo, int64), int(hi, int64))
    else if (x%input .and. x%rank == 1) then
      if (f32) status = einrel_set_input(program_of_case, padded, lo, hi, x%s1)
      if (.not. f32) status = einrel_set_input(program_of_case, padded, lo, hi, x%d1)
    else if (x%input) then
      if (f32) status = einrel_set_input(program_of_case, padded, lo, hi, x%s2)
      if (.not. f32) status = einrel_set_input(program_of_case, padded, lo, hi, x%d2)
    else if (x%rank == 1) then
      if (f32) status = einrel_set_output(program_of_case, padded, lo, hi, x%s1)
      if (.not. f32) status = einrel_set_output(program_of_case, padded, lo, hi, x%d1)
    else
      if (f32) status = einrel_set_output(program_of_case, padded, lo, hi, x%s2)
      if (.not. f32) status = einrel_set_output(program_of_case, padded, lo, hi, x%d2)
    end if
  end function bind

  ! bind's binding of a slab with 64-bit bounds (the generic's integer(c_int64_t) specifics).
  integer function bind_wide(x, name, lo, hi) result(status)
    type(tensor_t), intent(inout), target :: x
    character(len=*), intent(in) :: name
    integer(int64), intent(in) :: lo(:), hi(:)
    if (x%input .and. x%rank == 1) then
      if (f32) status = einrel_set_input(program_of_case, name, lo, hi, x%s1)
      if (.not. f32) status = einrel_set_input(program_of_case, name, lo, hi, x%d1)
    else if (x%input) then
      if (f32) status = einrel_set_input(program_of_case, name, lo, hi, x%s2)
      if (.not. f32) status = einrel_set_input(program_of_case, name, lo, hi, x%d2)
    else if (x%rank == 1) then
      if (f32) status = einrel_set_output(program_of_case, name, lo, hi, x%s1)
      if (.not. f32) status = einrel_set_output(program_of_case, name, lo, hi, x%d1)
    else
      if (f32) status = einrel_set_output(program_of_case, name, lo, hi, x%s2)
      if (.not. f32) status = einrel_set_output(program_of_case, name, lo, hi, x%d2)
    end if
  end function bind_wide

  ! ------------------------------------------------------------------------------------------------------
  ! The reference in plain loops, with a bound on the error of an evaluation in the case's dtype: a sum of
  ! K terms errs by at most (K - 1) eps sum|term| in any order, each product or join by eps |result|.

  subroutine evaluate()
    integer :: i, j, l, n, m, k
    real(c_double) :: s, magnitude, a, b
    n = t(1)%dims(1); m = t(1)%dims(2)
    if (family == matmul_case) then
      k = t(2)%dims(2)
      do i = 1, n
        do l = 1, k
          s = 0; magnitude = 0
          do j = 1, m
            s = s + t(1)%val(i, j) * t(2)%val(j, l)
            magnitude = magnitude + abs(t(1)%val(i, j) * t(2)%val(j, l))
          end do
          t(3)%val(i, l) = s
          t(3)%err(i, l) = (m + 1) * eps * 1.01d0 * magnitude
        end do
      end do
    else if (family == elementwise_case) then
      do i = 1, n
        do j = 1, m
          a = t(1)%val(i, j); b = t(2)%val(i, j)
          t(3)%val(i, j) = joined(a, b)
          t(3)%err(i, j) = 3 * eps * abs(t(3)%val(i, j))
        end do
      end do
    end if
    if (with_rowsum) call row_sums(t(ntensors - 1), t(ntensors))
  end subroutine evaluate

  real(c_double) function joined(a, b)
    real(c_double), intent(in) :: a, b
    select case (join)
    case (1); joined = a * b
    case (2); joined = a + b
    case (3); joined = a - b
    case (4); joined = max(a, b)
    case (5); joined = min(a, b)
    case (6); joined = (a - b)**2
    case default; joined = abs(a - b)
    end select
  end function joined

  ! r[i] = sum over j of x[i, j], with x's own errors carried.
  subroutine row_sums(x, r)
    type(tensor_t), intent(in) :: x
    type(tensor_t), intent(inout) :: r
    integer :: i, j
    real(c_double) :: s, e, magnitude
    do i = 1, x%dims(1)
      s = 0; e = 0; magnitude = 0
      do j = 1, x%dims(2)
        s = s + x%val(i, j)
        e = e + x%err(i, j)
        magnitude = magnitude + abs(x%val(i, j))
      end do
      r%val(i, 1) = s
      r%err(i, 1) = e + x%dims(2) * eps * 1.01d0 * magnitude
    end do
  end subroutine row_sums

  ! Compares this rank's slab of output x with the reference: |einrel - reference| <= 2 * bound (the
  ! bound holds for einrel and, as the reference computes in f64, for the reference too).
  subroutine check_slab(x, execution)
    type(tensor_t), intent(in) :: x
    integer, intent(in) :: execution
    integer :: i, j
    real(c_double) :: got, tolerance
    character(len=message_len) :: what
    if (x%empty) return
    do i = x%lo(1), x%hi(1) - 1
      do j = x%lo(2), x%hi(2) - 1
        if (x%rank == 1 .and. f32) got = real(x%s1(i - x%lo(1) + 1), c_double)
        if (x%rank == 1 .and. .not. f32) got = x%d1(i - x%lo(1) + 1)
        if (x%rank == 2 .and. f32) got = real(x%s2(j - x%lo(2) + 1, i - x%lo(1) + 1), c_double)
        if (x%rank == 2 .and. .not. f32) got = x%d2(j - x%lo(2) + 1, i - x%lo(1) + 1)
        tolerance = 2 * x%err(i + 1, j + 1) + merge(real(tiny(1.0_c_float), c_double), tiny(1.0_c_double), f32)
        if (.not. abs(got - x%val(i + 1, j + 1)) <= tolerance) then
          write(what, '(a, i0, 3a, i0, a, i0, a, es16.9, a, es16.9, a, es9.2)') 'execution ', execution, &
              ': output ', x%name, '[', i, ',', j, ']: einrel ', got, ', reference ', x%val(i + 1, j + 1), &
              ', tolerance ', tolerance
          call fail(trim(what))
          return
        end if
      end do
    end do
  end subroutine check_slab

  ! ------------------------------------------------------------------------------------------------------
  ! Running a case.

  ! This rank's first failure.
  subroutine fail(what)
    character(len=*), intent(in) :: what
    if (failed) return
    failed = .true.
    message = what
  end subroutine fail

  ! Whether a collective call gave OK on every rank; a failure (or a disagreement) is recorded.
  logical function collective_ok(call_name, status)
    character(len=*), intent(in) :: call_name
    integer, intent(in) :: status
    integer :: mine(2), extremes(2)
    mine = [status, -status]
    call MPI_Allreduce(mine, extremes, 2, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
    if (extremes(1) /= -extremes(2)) call fail(call_name // ' returned different statuses on different ranks')
    if (status /= EINREL_OK) call fail(call_name // ' failed: ' // einrel_last_error())
    collective_ok = extremes(1) == EINREL_OK
  end function collective_ok

  ! A bad box for x's slab must give EINREL_INVALID_ARGUMENT with a message of its own: the last error is
  ! first set to a known message (a parse error), which must not be left standing.
  subroutine expect_invalid(x, lo, hi, what)
    type(tensor_t), intent(inout), target :: x
    integer, intent(in) :: lo(:), hi(:)
    character(len=*), intent(in) :: what
    type(einrel_graph) :: bad
    character(len=:), allocatable :: primed, last
    character(len=message_len) :: returned
    integer :: status
    status = einrel_graph_parse('not a graph', 'primed.ein', bad)
    primed = einrel_last_error()
    status = bind(x, lo, hi)
    last = einrel_last_error()
    if (status /= EINREL_INVALID_ARGUMENT) then
      write(returned, '(i0)') status
      call fail('a box ' // what // ' of ' // x%name // "'s slab" // box_text(x%lo, x%hi, x%rank) // ' returned ' // &
                trim(returned) // ', not EINREL_INVALID_ARGUMENT (2)')
    else if (len(last) == 0 .or. last == primed) then
      call fail('a box ' // what // ' of ' // x%name // "'s slab returned EINREL_INVALID_ARGUMENT without a message" // &
                ' of its own (einrel_last_error(): "' // last // '")')
    end if
  end subroutine expect_invalid

  ! ' (slab box [l1:h1,l2:h2])'
  function box_text(lo, hi, rank) result(s)
    integer, intent(in) :: lo(2), hi(2), rank
    character(len=:), allocatable :: s
    character(len=64) :: buffer
    if (rank == 1) write(buffer, '(a, i0, a, i0, a)') ' (slab box [', lo(1), ':', hi(1), '])'
    if (rank == 2) write(buffer, '(a, 4(i0, a))') ' (slab box [', lo(1), ':', hi(1), ',', lo(2), ':', hi(2), '])'
    s = trim(buffer)
  end function box_text

  ! The negative cases of a non-square 2-d slab, then its right binding.
  logical function bind_slab(x)
    type(tensor_t), intent(inout), target :: x
    integer :: e(2)
    e = x%hi - x%lo
    if (x%rank == 2 .and. .not. x%empty .and. e(1) /= e(2)) then
      call expect_invalid(x, [x%lo(2), x%lo(1)], [x%hi(2), x%hi(1)], 'in Fortran order (extents not reversed)')
      call expect_invalid(x, x%lo, [x%hi(1) + 1, x%hi(2)], 'of another size than the array')
    end if
    bind_slab = bind(x, x%lo(1:x%rank), x%hi(1:x%rank)) == EINREL_OK
    if (.not. bind_slab) call fail('binding ' // x%name // box_text(x%lo, x%hi, x%rank) // ' failed: ' // &
                                   einrel_last_error())
  end function bind_slab

  ! Runs the case; a failure is recorded in `failed` and `message`. Handles: a failed parse leaves a null graph,
  ! which the next parse reuses; in odd cases the program is created twice into one variable, and the first
  ! program, freed by the second creation, must be refused as freed.
  subroutine run_case()
    type(einrel_graph) :: graph
    type(einrel_program) :: first
    integer :: i, execution, status, bound(1), all_bound(1)
    status = einrel_graph_parse('not a graph', 'bad.ein', graph)
    if (status == EINREL_OK .or. c_associated(graph%handle)) call fail('a failed parse left a live graph handle')
    status = einrel_graph_parse(trim(text), 'fuzz.ein', graph)
    if (.not. collective_ok('einrel_graph_parse', status)) return
    status = einrel_program_create(graph, MPI_COMM_WORLD, program_of_case)
    if (wide_bounds .and. status == EINREL_OK) then
      first = program_of_case
      status = einrel_program_create(graph, MPI_COMM_WORLD, program_of_case)
      ! (the allocator may hand the new program the old one's address: then there is nothing to tell apart)
      if (.not. c_associated(first%handle, program_of_case%handle)) then
        if (einrel_execute(first) /= EINREL_INVALID_ARGUMENT) &
          call fail('a program created over a live one left the old one live: ' // einrel_last_error())
      end if
    end if
    if (collective_ok('einrel_program_create', status)) then
      bound = 1
      do i = 1, ntensors
        if (.not. (t(i)%input .or. t(i)%output)) cycle
        if (.not. bind_slab(t(i))) bound(1) = 0
      end do
      call MPI_Allreduce(bound, all_bound, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
      do execution = 1, 2
        if (all_bound(1) == 0) exit
        call execute_and_check(execution)
      end do
    end if
    status = einrel_program_free(program_of_case)
    status = einrel_graph_free(graph)
  end subroutine run_case

  ! New inputs, an execution, the reference and this rank's check.
  subroutine execute_and_check(execution)
    integer, intent(in) :: execution
    integer :: i, a, b
    do i = 1, ntensors
      if (.not. t(i)%input) cycle
      do b = 1, t(i)%dims(2)
        do a = 1, t(i)%dims(1)
          t(i)%val(a, b) = draw_value()
        end do
      end do
      call fill_slab(t(i))
    end do
    do i = 1, ntensors
      if (t(i)%output) call poison_slab(t(i))
    end do
    if (.not. collective_ok('einrel_execute', einrel_execute(program_of_case))) return
    call evaluate()
    do i = 1, ntensors
      if (t(i)%output) call check_slab(t(i), execution)
    end do
  end subroutine execute_and_check

  ! Prints a failed case on rank 0: the first failing rank's message and the graph on one line.
  subroutine report_failure(s)
    integer(int64), intent(in) :: s
    character(len=message_len) :: messages(0:ranks - 1)
    character(len=text_len) :: line
    integer :: first, i
    call MPI_Gather(message, message_len, MPI_CHARACTER, messages, message_len, MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
    if (me /= 0) return
    first = 0
    do while (first < ranks - 1 .and. len_trim(messages(first)) == 0)
      first = first + 1
    end do
    line = text
    do i = 1, len_trim(line) - 1
      if (line(i:i) == new_line('a')) line(i:i) = ';'
    end do
    print '(a, i0, a, i0, a, i0, 4a)', 'FAILED case seed ', s, ' on ', ranks, ' ranks: rank ', first, ': ', &
        trim(messages(first)), ' | graph: ', trim(line(1:len_trim(line) - 1))
    flush(6)
  end subroutine report_failure

  ! Draws and runs case `s`; whether it passed on every rank.
  logical function fuzz_case(s)
    integer(int64), intent(in) :: s
    integer :: i, mine(1), anyone(1)
    do i = 1, max_tensors
      t(i) = tensor_t(name=' ')
    end do
    call seed_rng(s)
    wide_bounds = mod(s, 2_int64) == 1
    call random_graph()
    do i = 1, ntensors
      call make_slab(t(i))
    end do
    failed = .false.
    message = ''
    call run_case()
    mine = merge(1, 0, failed)
    call MPI_Allreduce(mine, anyone, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
    if (anyone(1) /= 0) call report_failure(s)
    fuzz_case = anyone(1) == 0
  end function fuzz_case

end program fuzz_fortran
