/* sim_pool.c -- the worker pool of sim_pool.h on POSIX threads: one
 * mutex, a FIFO of submitted tasks kept as an intrusive doubly linked
 * list (so the caller can take a task out of the middle when it joins one
 * no worker has started), one condition variable for workers waiting for
 * work and one for the caller waiting for a task in progress.  A caller
 * waiting for a worker's task takes queued tasks off the head of the FIFO
 * and runs them first, and sleeps only when none is queued.  It counts
 * what joins met (sim_pool_stats).  It does not decide what runs in
 * parallel or how results are combined.
 */
#include "sim_pool.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

enum { IDLE, QUEUED, RUNNING, DONE };

typedef struct task {
    int state;
    int part;         /* sim_pool_part_done was called since it was submitted */
    int prev, next;   /* the queue, -1 at its ends */
} task;

struct sim_pool {
    sim_pool_fn     fn;
    void           *ctx;
    int             n_threads, n_tasks, started;
    task           *t;
    int             head, tail;
    int             quit;
    pthread_mutex_t mu;
    pthread_cond_t  work, done;
    double          task_cpu_s;  /* CPU seconds inside fn, every thread */
    sim_pool_stats  st;
    pthread_t      *th;       /* n_threads - 1 */
    clockid_t      *clk;      /* their CPU clocks */
};

typedef struct worker_arg { sim_pool *p; int id; } worker_arg;

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void unlink_task(sim_pool *p, int k)
{
    task *t = &p->t[k];
    if (t->prev >= 0)
        p->t[t->prev].next = t->next;
    else
        p->head = t->next;
    if (t->next >= 0)
        p->t[t->next].prev = t->prev;
    else
        p->tail = t->prev;
    t->prev = t->next = -1;
}

static void *worker(void *va)
{
    sim_pool *p = ((worker_arg *)va)->p;
    int id = ((worker_arg *)va)->id;
    free(va);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && p->head < 0)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->quit)
            break;
        int k = p->head;
        unlink_task(p, k);
        p->t[k].state = RUNNING;
        pthread_mutex_unlock(&p->mu);
        double c0 = thread_cpu_s();
        p->fn(p->ctx, k, id);
        double c = thread_cpu_s() - c0;
        pthread_mutex_lock(&p->mu);
        p->task_cpu_s += c;
        p->t[k].state = DONE;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

sim_pool *sim_pool_create(int n_threads, int n_tasks, sim_pool_fn fn, void *ctx)
{
    assert(n_threads >= 2 && n_tasks >= 0);
    sim_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->fn = fn;
    p->ctx = ctx;
    p->n_threads = n_threads;
    p->n_tasks = n_tasks;
    p->head = p->tail = -1;
    p->t = calloc((size_t)(n_tasks ? n_tasks : 1), sizeof *p->t);
    p->th = calloc((size_t)n_threads - 1, sizeof *p->th);
    p->clk = calloc((size_t)n_threads - 1, sizeof *p->clk);
    if (!p->t || !p->th || !p->clk)
        goto out_free;
    for (int k = 0; k < n_tasks; k++)
        p->t[k] = (task){ IDLE, 0, -1, -1 };
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int i = 0; i < n_threads - 1; i++) {
        worker_arg *a = malloc(sizeof *a);
        if (a)
            *a = (worker_arg){ p, i + 1 };
        if (!a || pthread_create(&p->th[i], NULL, worker, a) != 0) {
            free(a);
            sim_pool_destroy(p);
            return NULL;
        }
        if (pthread_getcpuclockid(p->th[i], &p->clk[i]) != 0)
            p->clk[i] = (clockid_t)-1;
        p->started++;
    }
    return p;

out_free:
    free(p->clk);
    free(p->th);
    free(p->t);
    free(p);
    return NULL;
}

void sim_pool_destroy(sim_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->th[i], NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    free(p->clk);
    free(p->th);
    free(p->t);
    free(p);
}

int sim_pool_threads(const sim_pool *p) { return p->n_threads; }

void sim_pool_submit(sim_pool *p, int k)
{
    assert(k >= 0 && k < p->n_tasks);
    pthread_mutex_lock(&p->mu);
    task *t = &p->t[k];
    assert(t->state == IDLE || t->state == DONE);
    t->state = QUEUED;
    t->part = 0;
    t->prev = p->tail;
    t->next = -1;
    if (p->tail >= 0)
        p->t[p->tail].next = k;
    else
        p->head = k;
    p->tail = k;
    p->st.submitted++;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
}

/* With the lock held and k queued: runs k on the caller's thread. */
static void run_here(sim_pool *p, int k)
{
    unlink_task(p, k);
    p->t[k].state = RUNNING;
    pthread_mutex_unlock(&p->mu);
    double c0 = thread_cpu_s();
    p->fn(p->ctx, k, 0);
    double c = thread_cpu_s() - c0;
    pthread_mutex_lock(&p->mu);
    p->task_cpu_s += c;
    p->t[k].state = DONE;
}

/* With the lock held and k running on a worker: returns once k is done
 * (part: or has said its first part is), running the tasks queued
 * meanwhile on the caller's thread, oldest first; sleeps only when none
 * is queued. */
static void wait_running(sim_pool *p, int k, int part)
{
    p->st.waited++;
    for (;;) {
        const task *t = &p->t[k];
        if (t->state != RUNNING || (part && t->part))
            return;
        if (p->head >= 0) {
            p->st.helped++;
            run_here(p, p->head);
            continue;
        }
        double w0 = mono_s();
        pthread_cond_wait(&p->done, &p->mu);
        p->st.blocked_s += mono_s() - w0;
    }
}

int sim_pool_join(sim_pool *p, int k)
{
    assert(k >= 0 && k < p->n_tasks);
    pthread_mutex_lock(&p->mu);
    task *t = &p->t[k];
    int was = t->state, rc = was == IDLE ? 0 : 1;
    if (was == QUEUED) {
        p->st.ran_here++;
        run_here(p, k);
    } else if (was == RUNNING) {
        wait_running(p, k, 0);
        rc = 2;
    }
    t->state = IDLE;
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void sim_pool_part_done(sim_pool *p, int k)
{
    assert(k >= 0 && k < p->n_tasks);
    pthread_mutex_lock(&p->mu);
    p->t[k].part = 1;
    pthread_cond_broadcast(&p->done);
    pthread_mutex_unlock(&p->mu);
}

int sim_pool_wait_part(sim_pool *p, int k)
{
    assert(k >= 0 && k < p->n_tasks);
    pthread_mutex_lock(&p->mu);
    task *t = &p->t[k];
    int rc = 0;
    if (t->state == QUEUED) {
        p->st.ran_here++;
        run_here(p, k);
    } else if (t->state == RUNNING && !t->part) {
        wait_running(p, k, 1);
        rc = 2;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

sim_pool_stats sim_pool_stats_get(sim_pool *p)
{
    pthread_mutex_lock(&p->mu);
    sim_pool_stats s = p->st;
    pthread_mutex_unlock(&p->mu);
    return s;
}

double sim_pool_worker_cpu_s(const sim_pool *p)
{
    double s = 0;
    for (int i = 0; i < p->started; i++) {
        struct timespec ts;
        if (p->clk[i] != (clockid_t)-1 && clock_gettime(p->clk[i], &ts) == 0)
            s += (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    }
    return s;
}

double sim_pool_task_cpu_s(sim_pool *p)
{
    pthread_mutex_lock(&p->mu);
    double s = p->task_cpu_s;
    pthread_mutex_unlock(&p->mu);
    return s;
}
