/**
 * One task runner per backend, shared by every connection (HTTP sessions of
 * one process share the pool, so they share the task store too). The command
 * line configures it before serving; otherwise the defaults apply.
 */
import { MemoryTaskStore } from './memory-store.js';
import { TaskRunner, type TaskBackend, type TaskRunnerOptions } from './runner.js';
import type { TaskLimits, TaskStore } from './store.js';

/** Options for {@link configureTasks}. */
export interface TasksOptions extends TaskLimits, TaskRunnerOptions {
  /**
   * Where tasks are kept.
   * @default a {@link MemoryTaskStore} with these limits
   */
  readonly store?: TaskStore;
}

const runners = new WeakMap<TaskBackend, TaskRunner>();

/** Sets up the backend's task runner (call before serving; replaces an earlier one). */
export function configureTasks(backend: TaskBackend, options: TasksOptions = {}): TaskRunner {
  const previous = runners.get(backend);
  if (previous) void previous.close();
  const runner = new TaskRunner(backend, options.store ?? new MemoryTaskStore(options), options);
  runners.set(backend, runner);
  return runner;
}

/** The backend's task runner, made with the defaults on first use. */
export function tasksOf(backend: TaskBackend): TaskRunner {
  return runners.get(backend) ?? configureTasks(backend);
}
