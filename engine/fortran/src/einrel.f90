! einrel's Fortran module over the C API (einrel.h, docs/c-fortran.md). Every function returns the C API's
! status (EINREL_OK = 0); einrel_last_error() gives the message of the last failure.
!
! Index convention: einrel's tensors are C order. A Fortran array a(n1, n2, ..., nk) (column-major) holds the
! C-order tensor a[nk, ..., n2, n1]: the same memory with the dimensions reversed. A graph names its tensors
! in that C order, and boxes are given as C-order bounds, zero-based, hi exclusive: the slab u(1:m, 1:rows)
! holding rows first .. first+rows-1 of an n x m field u[n, m] is the box lo = [first, 0], hi = [first+rows, m].
module einrel
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer(c_int), parameter, public :: EINREL_OK = 0, EINREL_ERROR = 1, EINREL_INVALID_ARGUMENT = 2
  integer(c_int), parameter, public :: EINREL_F32 = 0, EINREL_F64 = 1

  type, public :: einrel_graph
    type(c_ptr) :: handle = c_null_ptr
  end type einrel_graph
  type, public :: einrel_program
    type(c_ptr) :: handle = c_null_ptr
  end type einrel_program

  public :: einrel_last_error, einrel_graph_parse, einrel_graph_read, einrel_graph_free
  public :: einrel_program_create, einrel_set_input, einrel_set_output, einrel_set_no_piece
  public :: einrel_execute, einrel_program_free

  ! One piece of f64 or f32 data of any rank: a whole contiguous array (its box in C order, see above), the
  ! box's bounds 32-bit or 64-bit integers (64-bit for extents of 2^31 elements or more).
  interface einrel_set_input
    module procedure set_input_d, set_input_s, set_input_d64, set_input_s64
  end interface einrel_set_input
  interface einrel_set_output
    module procedure set_output_d, set_output_s, set_output_d64, set_output_s64
  end interface einrel_set_output

  interface
    function c_last_error() bind(C, name="einrel_last_error") result(message)
      import :: c_ptr
      type(c_ptr) :: message
    end function c_last_error
    function c_graph_parse(text, name, graph) bind(C, name="einrel_graph_parse") result(status)
      import :: c_char, c_ptr, c_int
      character(kind=c_char), dimension(*), intent(in) :: text, name
      type(c_ptr), intent(out) :: graph
      integer(c_int) :: status
    end function c_graph_parse
    function c_graph_read(path, graph) bind(C, name="einrel_graph_read") result(status)
      import :: c_char, c_ptr, c_int
      character(kind=c_char), dimension(*), intent(in) :: path
      type(c_ptr), intent(out) :: graph
      integer(c_int) :: status
    end function c_graph_read
    function c_graph_free(graph) bind(C, name="einrel_graph_free") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: graph
      integer(c_int) :: status
    end function c_graph_free
    function c_program_create_f(graph, comm, planner, program) bind(C, name="einrel_program_create_f") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: graph
      integer(c_int), value :: comm
      type(c_ptr), value :: planner
      type(c_ptr), intent(out) :: program
      integer(c_int) :: status
    end function c_program_create_f
    function c_set_input(program, name, dtype, rank, count, lo, hi, data) &
        bind(C, name="einrel_program_set_input") result(status)
      import :: c_ptr, c_int, c_char, c_int64_t
      type(c_ptr), value :: program
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int), value :: dtype, rank, count
      integer(c_int64_t), dimension(*), intent(in) :: lo, hi
      type(c_ptr), dimension(*), intent(in) :: data
      integer(c_int) :: status
    end function c_set_input
    function c_set_output(program, name, dtype, rank, count, lo, hi, data) &
        bind(C, name="einrel_program_set_output") result(status)
      import :: c_ptr, c_int, c_char, c_int64_t
      type(c_ptr), value :: program
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int), value :: dtype, rank, count
      integer(c_int64_t), dimension(*), intent(in) :: lo, hi
      type(c_ptr), dimension(*), intent(in) :: data
      integer(c_int) :: status
    end function c_set_output
    function c_set_column_major(program, name, input, dtype, box_rank, lo, hi, array_rank, array_shape, data) &
        bind(C, name="einrel_program_set_column_major") result(status)
      import :: c_ptr, c_int, c_char, c_int64_t
      type(c_ptr), value :: program
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int), value :: input, dtype, box_rank, array_rank
      integer(c_int64_t), dimension(*), intent(in) :: lo, hi, array_shape
      type(c_ptr), value :: data
      integer(c_int) :: status
    end function c_set_column_major
    function c_execute(program) bind(C, name="einrel_program_execute") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: program
      integer(c_int) :: status
    end function c_execute
    function c_program_free(program) bind(C, name="einrel_program_free") result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: program
      integer(c_int) :: status
    end function c_program_free
    function c_strlen(s) bind(C, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function c_strlen
  end interface

contains

  ! The message of this thread's last failed call.
  function einrel_last_error() result(message)
    character(len=:), allocatable :: message
    character(kind=c_char), pointer :: chars(:)
    type(c_ptr) :: p
    integer :: i, n
    p = c_last_error()
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: message)
    do i = 1, n
      message(i:i) = chars(i)
    end do
  end function einrel_last_error

  ! Local: parses a graph in einrel's graph language; `name` (trimmed) names it in messages. A graph `graph` held
  ! before is freed first; on failure `graph` is null.
  integer function einrel_graph_parse(text, name, graph) result(status)
    character(len=*), intent(in) :: text, name
    type(einrel_graph), intent(inout) :: graph
    status = einrel_graph_free(graph)
    status = c_graph_parse(text // c_null_char, trim(name) // c_null_char, graph%handle)
  end function einrel_graph_parse

  ! Local: reads the graph file at trim(path); a graph held before is freed first; on failure `graph` is null.
  integer function einrel_graph_read(path, graph) result(status)
    character(len=*), intent(in) :: path
    type(einrel_graph), intent(inout) :: graph
    status = einrel_graph_free(graph)
    status = c_graph_read(trim(path) // c_null_char, graph%handle)
  end function einrel_graph_read

  integer function einrel_graph_free(graph) result(status)
    type(einrel_graph), intent(inout) :: graph
    status = c_graph_free(graph%handle)
    graph%handle = c_null_ptr
  end function einrel_graph_free

  ! Collective over comm (a Fortran MPI handle: the integer of `use mpi`, or comm%MPI_VAL of mpi_f08):
  ! plans the graph on its ranks with the default planner. A program held before is freed first (collectively);
  ! on failure `program` is null.
  integer function einrel_program_create(graph, comm, program) result(status)
    type(einrel_graph), intent(in) :: graph
    integer, intent(in) :: comm
    type(einrel_program), intent(inout) :: program
    status = einrel_program_free(program)
    status = c_program_create_f(graph%handle, int(comm, c_int), c_null_ptr, program%handle)
  end function einrel_program_create

  ! Local: this rank has no piece of input or output `name` (`rank` dimensions, dtype EINREL_F32 or _F64).
  integer function einrel_set_no_piece(program, name, input, dtype, rank) result(status)
    type(einrel_program), intent(in) :: program
    character(len=*), intent(in) :: name
    logical, intent(in) :: input
    integer, intent(in) :: dtype, rank
    integer(c_int64_t) :: none(1)
    type(c_ptr) :: no_data(1)
    none = 0
    no_data = c_null_ptr
    if (input) then
      status = c_set_input(program%handle, trim(name) // c_null_char, int(dtype, c_int), int(rank, c_int), 0_c_int, &
                           none, none, no_data)
    else
      status = c_set_output(program%handle, trim(name) // c_null_char, int(dtype, c_int), int(rank, c_int), 0_c_int, &
                            none, none, no_data)
    end if
  end function einrel_set_no_piece

  ! One piece at `data` (an array of shape `array_shape`) with C-order box [lo, hi): an input or an output. A box
  ! of another rank than the array, or whose extents are not the array's shape reversed, is an invalid argument
  ! (checked by the C API, which sets the message).
  integer function set_piece(program, name, input, dtype, lo, hi, data, array_shape) result(status)
    type(einrel_program), intent(in) :: program
    character(len=*), intent(in) :: name
    logical, intent(in) :: input
    integer(c_int), intent(in) :: dtype
    integer(c_int64_t), intent(in) :: lo(:), hi(:)
    type(c_ptr), intent(in) :: data
    integer(c_int64_t), intent(in) :: array_shape(:)
    integer(c_int64_t) :: lo_c(max(1, size(lo))), hi_c(max(1, size(lo))), shape_c(max(1, size(array_shape)))
    integer(c_int) :: input_c, box_rank
    lo_c = 0
    hi_c = 0
    shape_c = 0
    lo_c(1:size(lo)) = lo
    hi_c(1:min(size(lo), size(hi))) = hi(1:min(size(lo), size(hi)))
    shape_c(1:size(array_shape)) = array_shape
    input_c = merge(1_c_int, 0_c_int, input)
    box_rank = int(size(lo), c_int)
    if (size(hi) /= size(lo)) box_rank = -1  ! the C API reports lo and hi of different lengths
    status = c_set_column_major(program%handle, trim(name) // c_null_char, input_c, dtype, box_rank, lo_c, hi_c, &
                                int(size(array_shape), c_int), shape_c, data)
  end function set_piece

  ! One piece of any rank (assumed rank: the whole contiguous array), f64 or f32, bounds 32-bit or 64-bit.
  integer function set_input_d(program, name, lo, hi, a) result(status)
    type(einrel_program), intent(in) :: program
    character(len=*), intent(in) :: name
    integer(c_int32_t), intent(in) :: lo(:), hi(:)
    real(c_double), intent(in), target, contiguous :: a(..)
    status = set_piece(program, name, .true., EINREL_F64, int(lo, c_int64_t), int(hi, c_int64_t), &
                       c_loc(a), shape(a, kind=c_int64_t))
  end function set_input_d
  integer function set_input_d64(program, name, lo, hi, a) result(status)
    type(einrel_program), intent(in) :: program
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(in) :: lo(:), hi(:)
    real(c_double), intent(in), target, contiguous :: a(..)
    status = set_piece(program, name, .true., EINREL_F64, lo, hi, &
                       c_loc(a), shape(a, kind=c_int64_t))
  end function set_input_d64
  integer function set_output_d(program, name, lo, hi, a) result(status)
    type(einrel_program), intent(in) :: program
    character(len=*), intent(in) :: name
    integer(c_int32_t), intent(in) :: lo(:), hi(:)
    real(c_double), intent(inout), target, contiguous :: a(..)
    status = set_piece(program, name, .false., EINREL_F64, int(lo, c_int64_t), int(hi, c_int64_t), &
                       c_loc(a), shape(a, kind=c_int64_t))
  end function set_output_d
  integer function set_output_d64(program, name, lo, hi, a) result(status)
    type(einrel_program), intent(in) :: program
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(in) :: lo(:), hi(:)
    real(c_double), intent(inout), target, contiguous :: a(..)
    status = set_piece(program, name, .false., EINREL_F64, lo, hi, &
                       c_loc(a), shape(a, kind=c_int64_t))
  end function set_output_d64
  integer function set_input_s(program, name, lo, hi, a) result(status)
    type(einrel_program), intent(in) :: program
    character(len=*), intent(in) :: name
    integer(c_int32_t), intent(in) :: lo(:), hi(:)
    real(c_float), intent(in), target, contiguous :: a(..)
    status = set_piece(program, name, .true., EINREL_F32, int(lo, c_int64_t), int(hi, c_int64_t), &
                       c_loc(a), shape(a, kind=c_int64_t))
  end function set_input_s
  integer function set_input_s64(program, name, lo, hi, a) result(status)
    type(einrel_program), intent(in) :: program
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(in) :: lo(:), hi(:)
    real(c_float), intent(in), target, contiguous :: a(..)
    status = set_piece(program, name, .true., EINREL_F32, lo, hi, &
                       c_loc(a), shape(a, kind=c_int64_t))
  end function set_input_s64
  integer function set_output_s(program, name, lo, hi, a) result(status)
    type(einrel_program), intent(in) :: program
    character(len=*), intent(in) :: name
    integer(c_int32_t), intent(in) :: lo(:), hi(:)
    real(c_float), intent(inout), target, contiguous :: a(..)
    status = set_piece(program, name, .false., EINREL_F32, int(lo, c_int64_t), int(hi, c_int64_t), &
                       c_loc(a), shape(a, kind=c_int64_t))
  end function set_output_s
  integer function set_output_s64(program, name, lo, hi, a) result(status)
    type(einrel_program), intent(in) :: program
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(in) :: lo(:), hi(:)
    real(c_float), intent(inout), target, contiguous :: a(..)
    status = set_piece(program, name, .false., EINREL_F32, lo, hi, &
                       c_loc(a), shape(a, kind=c_int64_t))
  end function set_output_s64

  ! Collective: evaluates the graph on the bound pieces (the arrays must stay allocated and in place).
  integer function einrel_execute(program) result(status)
    type(einrel_program), intent(in) :: program
    status = c_execute(program%handle)
  end function einrel_execute

  ! Collective: frees a program.
  integer function einrel_program_free(program) result(status)
    type(einrel_program), intent(inout) :: program
    status = c_program_free(program%handle)
    program%handle = c_null_ptr
  end function einrel_program_free

end module einrel
