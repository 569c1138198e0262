! A Fortran host code's time loop through einrel's Fortran module (engine/fortran, docs/c-fortran.md). Each
! rank owns a slab of rows of a field u (n x m, rows split unevenly); rank 0 owns the operator K (m x m).
! Every step einrel computes v = u K + u, writes v into each rank's own slab, and the host code takes v / 2
! as the next u; every rank checks its slab against the same steps in plain loops.
!
! Fortran arrays are column-major: the slab u_slab(m, rows) is the C-order tensor u[rows, m], so the rows of
! the field are its second index here, and K's element (j, c) of the graph is k_op(c, j).
!
!   mpiexec.mpich -n 3 build/drivers/einrel_slab_operator_f [N M STEPS]
program slab_operator
  use, intrinsic :: iso_c_binding, only: c_double
  use mpi
  use einrel
  implicit none
  integer :: ierr, provided, rank, size, n, m, steps, rows, first, step, i, j, c, status
  character(len=32) :: arg
  character(len=512) :: text
  real(c_double), allocatable, target :: u(:, :), v(:, :), k_op(:, :), reference(:, :), next(:, :)
  real(c_double) :: s, worst(2), all(2), error
  type(einrel_graph) :: graph, bad
  type(einrel_program) :: program

  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  n = 100; m = 60; steps = 10
  if (command_argument_count() >= 3) then
    call get_command_argument(1, arg); read(arg, *) n
    call get_command_argument(2, arg); read(arg, *) m
    call get_command_argument(3, arg); read(arg, *) steps
  end if

  ! An invalid graph comes back as an error code with a one-line message.
  status = einrel_graph_parse('input u f64[4,4]' // new_line('a') // 'v = einsum("ij,jk->ik", u, w)' // &
                              new_line('a') // 'output v' // new_line('a'), 'bad.ein', bad)
  if (status /= EINREL_ERROR .or. len(einrel_last_error()) == 0) call fail('an invalid graph was not reported')
  if (rank == 0) print '(a, a)', 'an invalid graph: ', einrel_last_error()

  write(text, '(a, i0, a, i0, a, i0, a, i0, a)') 'input u f64[', n, ',', m, ']' // new_line('a') // 'input K f64[', &
      m, ',', m, ']' // new_line('a') // 'uk = einsum("ij,jk->ik", u, K)' // new_line('a') // &
      'v = einsum("ij,ij->ij", uk, u, join=add)' // new_line('a') // 'output v' // new_line('a')
  if (einrel_graph_parse(trim(text), 'slab.ein', graph) /= EINREL_OK) call fail('parse')
  if (einrel_program_create(graph, MPI_COMM_WORLD, program) /= EINREL_OK) call fail('create')

  rows = n / size
  if (rank < mod(n, size)) rows = rows + 1
  first = rank * (n / size) + min(rank, mod(n, size))
  allocate(u(m, max(rows, 1)), v(m, max(rows, 1)), reference(m, max(rows, 1)), next(m, max(rows, 1)), k_op(m, m))
  do j = 0, m - 1
    do c = 0, m - 1
      k_op(c + 1, j + 1) = cos(0.1d0 * dble(j * m + c)) / dble(m)   ! K[j, c]
    end do
  end do
  do i = 0, rows - 1
    do c = 0, m - 1
      u(c + 1, i + 1) = sin(0.01d0 * dble((first + i) * m + c))
    end do
  end do
  reference = u

  if (einrel_set_input(program, 'u', [0, 0], [1, 1], u) /= EINREL_INVALID_ARGUMENT) &
    call fail('a box of another size than its array was taken')
  if (rows > 0) then
    status = einrel_set_input(program, 'u', [first, 0], [first + rows, m], u)
    if (status == EINREL_OK) status = einrel_set_output(program, 'v', [first, 0], [first + rows, m], v)
  else
    status = einrel_set_no_piece(program, 'u', .true., EINREL_F64, 2)
    if (status == EINREL_OK) status = einrel_set_no_piece(program, 'v', .false., EINREL_F64, 2)
  end if
  if (status == EINREL_OK) then
    if (rank == 0) then
      status = einrel_set_input(program, 'K', [0, 0], [m, m], k_op)
    else
      status = einrel_set_no_piece(program, 'K', .true., EINREL_F64, 2)
    end if
  end if
  if (status /= EINREL_OK) call fail('bind')

  do step = 1, steps
    if (einrel_execute(program) /= EINREL_OK) call fail('execute')
    u = 0.5d0 * v
    do i = 1, rows                          ! the same step in plain loops
      do c = 1, m
        s = reference(c, i)
        do j = 1, m
          s = s + reference(j, i) * k_op(c, j)
        end do
        next(c, i) = 0.5d0 * s
      end do
    end do
    reference = next
  end do
  worst = 0
  if (rows > 0) worst = [maxval(abs(u(:, 1:rows) - reference(:, 1:rows))), maxval(abs(reference(:, 1:rows)))]
  call MPI_Allreduce(worst, all, 2, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  error = all(1) / all(2)
  if (rank == 0) print '(a, i0, a, i0, a, i0, a, i0, a, es9.2, a)', 'slab operator (Fortran): ', n, ' x ', m, &
      ' field on ', size, ' ranks, ', steps, ' steps, max relative error ', error, merge(': ok   ', ': WRONG', error < 1d-12)
  status = einrel_program_free(program)
  status = einrel_graph_free(graph)
  call MPI_Finalize(ierr)
  if (error >= 1d-12) error stop 1

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a, i0, a, a, a, a)', 'rank ', rank, ': ', what, ': ', einrel_last_error()
    error stop 1
  end subroutine fail

end program slab_operator
