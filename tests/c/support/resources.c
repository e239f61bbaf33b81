/*
 * resources.c: see resources.h.
 */
#include "resources.h"

#include "kn_test.h"

#include <dirent.h>
#include <string.h>
#include <unistd.h>

static int count_dir(const char *path) {
    DIR *dir = opendir(path);
    if (!dir)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)))
        n += e->d_name[0] != '.';
    closedir(dir);
    /* the directory stream's own descriptor was listed too */
    return n - (strcmp(path, "/proc/self/fd") == 0);
}

kn_test_resources kn_test_resources_now(void) {
    return (kn_test_resources){count_dir("/proc/self/task"), count_dir("/proc/self/fd")};
}

void kn_test_resources_assert_back(kn_test_resources before, const char *what) {
    kn_test_resources now = kn_test_resources_now();
    for (int i = 0; i < 500 && (now.threads != before.threads || now.fds != before.fds); i++) {
        usleep(10 * 1000);
        now = kn_test_resources_now();
    }
    if (now.fds != before.fds)
        kn_test_run("ls -l /proc/%d/fd >&2", (int)getpid());
    print_message("%s: threads %d -> %d, fds %d -> %d\n", what, before.threads, now.threads, before.fds, now.fds);
    assert_int_equal(now.threads, before.threads);
    assert_int_equal(now.fds, before.fds);
}
