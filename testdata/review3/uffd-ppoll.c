#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
    int uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
    if (uffd < 0) { perror("userfaultfd"); return 1; }
    struct uffdio_api api = { .api = UFFD_API };
    if (ioctl(uffd, UFFDIO_API, &api)) { perror("UFFDIO_API"); return 1; }
    long pg = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct uffdio_register reg = { .range = { .start = (unsigned long)p, .len = pg }, .mode = UFFDIO_REGISTER_MODE_MISSING };
    if (ioctl(uffd, UFFDIO_REGISTER, &reg)) { perror("UFFDIO_REGISTER"); return 1; }
    printf("Name? "); fflush(stdout);
    /* the kernel's copy of the poll array faults into the uffd region: this
       thread sleeps in the fault, inside ppoll, and nobody ever answers */
    syscall(SYS_ppoll, (struct pollfd *)p, 1, NULL, NULL, 8);
    return 0;
}
