/* sim_pool.h -- a fixed pool of worker threads that runs numbered tasks
 * for one caller thread.  The caller submits task k (its inputs already
 * in place), goes on, and joins k before it reads k's outputs; a task
 * that no worker has started when it is joined runs on the caller's own
 * thread, so n threads never means more than n tasks at once and a
 * caller never sleeps on work it could do.  Workers take tasks in the
 * order they were submitted.  The pool knows nothing of what a task
 * computes: it calls one function with (task, thread), thread 0 being the
 * caller and 1 .. n-1 the workers, so a task can use per-thread scratch.
 * Results are the caller's to combine, in the caller's order: nothing
 * here reduces in completion order.
 */
#ifndef SIM_POOL_H
#define SIM_POOL_H

typedef struct sim_pool sim_pool;

/* fn(ctx, task, thread) runs task (0 .. n_tasks-1) on thread. */
typedef void (*sim_pool_fn)(void *ctx, int task, int thread);

/* n_threads - 1 workers (n_threads >= 2) for tasks 0 .. n_tasks-1.
 * NULL when out of memory or a thread cannot be created. */
sim_pool *sim_pool_create(int n_threads, int n_tasks, sim_pool_fn fn, void *ctx);
/* Waits for the tasks in progress, drops the ones not started, stops
 * the workers.  NULL: nothing. */
void sim_pool_destroy(sim_pool *p);

int sim_pool_threads(const sim_pool *p);

/* Task k's inputs are ready: a worker may run it from now on.  k must
 * not be pending (submitted and not joined).  O(1). */
void sim_pool_submit(sim_pool *p, int k);
/* Returns when task k has run: at once when it is done or was never
 * submitted, after running it here when no worker has taken it, else
 * when its worker finishes; while it waits for a worker the caller runs
 * the oldest queued tasks itself (as a worker would, so it never sleeps
 * while work is queued).  0 when k was not pending, 1 when it was done or
 * run here, 2 when the caller had to wait for k's worker. */
int sim_pool_join(sim_pool *p, int k);

/* Two-part tasks: a task may say, once, that its first part is done
 * (its outputs of that part are final: a producer's buffer others read
 * while its second part still runs).  sim_pool_part_done is called by
 * the task itself, on whatever thread runs it.  sim_pool_wait_part
 * returns when task k's first part is done: at once when k is not
 * pending or has said so, after running all of k here when no worker has
 * taken it, else when its worker says so or finishes.  Either way k stays
 * pending until joined. */
void sim_pool_part_done(sim_pool *p, int k);
/* 2 when it had to wait for k's worker (running queued tasks meanwhile,
 * as sim_pool_join does), else 0. */
int  sim_pool_wait_part(sim_pool *p, int k);

/* What the caller's joins and waits met, for finding where a run with
 * threads loses time (never part of a run's outputs). */
typedef struct sim_pool_stats {
    long   submitted;
    long   ran_here;    /* joined or waited for while still queued: run by the caller */
    long   waited;      /* joined or waited for while a worker ran it */
    long   helped;      /* queued tasks the caller ran while waiting */
    double blocked_s;   /* wall seconds the caller slept on a worker */
} sim_pool_stats;
sim_pool_stats sim_pool_stats_get(sim_pool *p);

/* CPU seconds the workers have used so far (their thread CPU clocks). */
double sim_pool_worker_cpu_s(const sim_pool *p);
/* CPU seconds spent inside tasks so far, on every thread (the caller's
 * included): the parallel part of the work, for Amdahl's law. */
double sim_pool_task_cpu_s(sim_pool *p);

#endif
