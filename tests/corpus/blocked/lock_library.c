/* A lock-heavy "library" with a bug: a pool of worker threads takes jobs from a queue
 * (mutex + condvar), each job interns a key in a hash table whose entries are malloc'd and
 * carry their own mutex, and updates the entry under that mutex. Interning is a
 * check-then-act across two critical sections (look up under the table lock, allocate
 * outside it, insert under the lock again), so two workers can insert the same key twice:
 * the final check asserts that every key is in the table once. Heap addresses (entries,
 * jobs, their mutexes) appear in the schedule, so a saved schedule replays only if the
 * program allocates the same way every time. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define WORKERS 4
#define JOBS 12
#define BUCKETS 8

struct entry {
    pthread_mutex_t lock;
    int key;
    int count;
    char *payload;
    struct entry *next;
};

struct job {
    int key;
    struct job *next;
};

static struct entry *table[BUCKETS];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static struct job *queue;
static int closed;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cv = PTHREAD_COND_INITIALIZER;

static struct entry *find(int key) {
    for (struct entry *e = table[key % BUCKETS]; e; e = e->next)
        if (e->key == key) return e;
    return NULL;
}

static struct entry *intern(int key) {
    pthread_mutex_lock(&table_lock);
    struct entry *e = find(key);
    pthread_mutex_unlock(&table_lock);
    if (e) return e;
    /* Not there: build one outside the lock (the bug: another worker may do the same). */
    e = calloc(1, sizeof *e);
    pthread_mutex_init(&e->lock, NULL);
    e->key = key;
    e->payload = malloc(32 + key);
    memset(e->payload, 'k', 32 + key);
    pthread_mutex_lock(&table_lock);
    e->next = table[key % BUCKETS];
    table[key % BUCKETS] = e;
    pthread_mutex_unlock(&table_lock);
    return e;
}

static void *worker(void *arg) {
    /* Some per-thread state on the heap, as libraries keep. */
    char *scratch = malloc(256);
    for (;;) {
        pthread_mutex_lock(&queue_lock);
        while (!queue && !closed) pthread_cond_wait(&queue_cv, &queue_lock);
        struct job *j = queue;
        if (j) queue = j->next;
        pthread_mutex_unlock(&queue_lock);
        if (!j) break;
        struct entry *e = intern(j->key);
        pthread_mutex_lock(&e->lock);
        e->count++;
        memcpy(scratch, e->payload, 32);
        pthread_mutex_unlock(&e->lock);
        free(j);
    }
    free(scratch);
    return arg;
}

int main(void) {
    pthread_t w[WORKERS];
    for (int i = 0; i < WORKERS; i++) pthread_create(&w[i], NULL, worker, NULL);
    for (int i = 0; i < JOBS; i++) {
        struct job *j = malloc(sizeof *j);
        j->key = i % 5;
        pthread_mutex_lock(&queue_lock);
        j->next = queue;
        queue = j;
        pthread_cond_signal(&queue_cv);
        pthread_mutex_unlock(&queue_lock);
    }
    pthread_mutex_lock(&queue_lock);
    closed = 1;
    pthread_cond_broadcast(&queue_cv);
    pthread_mutex_unlock(&queue_lock);
    for (int i = 0; i < WORKERS; i++) pthread_join(w[i], NULL);
    int total = 0;
    for (int k = 0; k < 5; k++) {
        int copies = 0;
        for (struct entry *e = table[k % BUCKETS]; e; e = e->next)
            if (e->key == k) {
                copies++;
                total += e->count;
            }
        assert(copies == 1);
    }
    assert(total == JOBS);
    return 0;
}
