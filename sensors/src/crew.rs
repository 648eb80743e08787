//! Threads kept for a node's life that share out one step's work with the
//! node's own thread: each takes the next item not yet taken, so a thread
//! the OS puts aside for a while holds up one item, not a fixed share.
//!
//! Starting threads for every step (`std::thread::scope`) was simpler, but
//! a new thread started too late to take its share of a step of a few
//! milliseconds: in office-50's lockstep it scanned 28 % of the scans, and
//! the node's own thread the rest.
//!
//! Each thread also keeps working memory of its own (`S`) from one item
//! to the next, so that what one item warmed in the cache serves the next.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

/// One step's work: a context every thread reads and the items they share out.
struct Step<C, T> {
    context: C,
    items: Vec<Mutex<T>>,
    next: AtomicUsize,
}

impl<C, T> Step<C, T> {
    /// Works on the next item not yet taken until none is left. Each item
    /// is taken once, so its lock is never contended.
    fn work_through<S>(&self, work: fn(&C, &mut T, &mut S), scratch: &mut S) {
        while let Some(item) = self.items.get(self.next.fetch_add(1, Ordering::Relaxed)) {
            work(&self.context, &mut item.lock().unwrap_or_else(|e| e.into_inner()), scratch);
        }
    }
}

/// Helper threads and the work they do on each item, with working memory
/// `S` of each thread's own.
pub struct Crew<C, T, S> {
    /// One channel per helper: the step it is to work on.
    steps: Vec<Sender<Arc<Step<C, T>>>>,
    /// Each helper's word that it is done with a step (false: it panicked).
    done: Receiver<bool>,
    work: fn(&C, &mut T, &mut S),
}

impl<C: Send + Sync + 'static, T: Send + 'static, S: Default + 'static> Crew<C, T, S> {
    /// A crew of `helpers` threads named `name-i` doing `work`, each
    /// with working memory of its own, `S::default()` at first.
    pub fn new(helpers: usize, name: &str, work: fn(&C, &mut T, &mut S)) -> std::io::Result<Crew<C, T, S>> {
        let (done_tx, done) = channel();
        let mut steps = Vec::with_capacity(helpers);
        for i in 0..helpers {
            let (step_tx, step_rx) = channel::<Arc<Step<C, T>>>();
            let done_tx = done_tx.clone();
            std::thread::Builder::new().name(format!("{name}-{i}")).spawn(move || {
                let mut scratch = S::default();
                while let Ok(step) = step_rx.recv() {
                    let finished = catch_unwind(AssertUnwindSafe(|| step.work_through(work, &mut scratch))).is_ok();
                    // Let go of the step before saying so: the caller takes it back.
                    drop(step);
                    if done_tx.send(finished).is_err() {
                        break;
                    }
                }
            })?;
            steps.push(step_tx);
        }
        Ok(Crew { steps, done, work })
    }

    /// Does the work on every item, on the calling thread (with `scratch`
    /// as its working memory) and the helpers (as many as there are items
    /// beyond the first), and gives the context and the items back in
    /// their order.
    ///
    /// # Panics
    /// When the work panicked on a helper thread, as it would have on this one.
    pub fn run(&self, context: C, items: Vec<T>, scratch: &mut S) -> (C, Vec<T>) {
        let step =
            Arc::new(Step { context, items: items.into_iter().map(Mutex::new).collect(), next: AtomicUsize::new(0) });
        let wanted = self.steps.len().min(step.items.len().saturating_sub(1));
        let sent = self.steps[..wanted].iter().filter(|helper| helper.send(step.clone()).is_ok()).count();
        step.work_through(self.work, scratch);
        let mut all_finished = true;
        for _ in 0..sent {
            // A helper gone (its thread ended) has dropped its copy too.
            all_finished &= self.done.recv().unwrap_or(false);
        }
        assert!(all_finished, "a helper thread panicked while working on a step");
        let Ok(step) = Arc::try_unwrap(step) else { unreachable!("every helper let go of the step before answering") };
        let items = step.items.into_iter().map(|item| item.into_inner().unwrap_or_else(|e| e.into_inner())).collect();
        (step.context, items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds the context to the item, and counts in the thread's memory
    /// the items that thread worked on.
    fn add_context(context: &u64, item: &mut u64, worked: &mut usize) {
        *item += *context;
        *worked += 1;
    }

    #[test]
    fn every_item_is_worked_on_once_and_comes_back_in_order() {
        let crew = Crew::new(3, "test", add_context).unwrap();
        let mut worked_here = 0;
        for n in [0, 1, 2, 7, 1000] {
            let (context, items) = crew.run(10, (0..n).collect(), &mut worked_here);
            assert_eq!(context, 10);
            assert_eq!(items, (0..n).map(|i| i + 10).collect::<Vec<u64>>(), "{n} items");
        }
        assert!(worked_here >= 1, "the calling thread's memory is the one it works with");
    }

    #[test]
    fn the_helper_takes_a_share() {
        // Whoever takes item 0 or 1 waits at the barrier for the other
        // thread, which can then only take the other one of the two.
        fn meet_then_record(barrier: &std::sync::Barrier, item: &mut (u32, Option<String>), _: &mut ()) {
            if item.0 < 2 {
                barrier.wait();
            }
            item.1 = std::thread::current().name().map(str::to_string);
        }
        let crew = Crew::new(1, "helper", meet_then_record).unwrap();
        let (_, items) = crew.run(std::sync::Barrier::new(2), (0..10).map(|i| (i, None)).collect(), &mut ());
        let first_two: Vec<_> = items[..2].iter().map(|(_, name)| name.as_deref() == Some("helper-0")).collect();
        assert!(first_two.contains(&true) && first_two.contains(&false), "{items:?}");
    }

    #[test]
    #[should_panic(expected = "a helper thread panicked")]
    fn a_panic_on_a_helper_reaches_the_caller() {
        fn panic_on_the_helper(barrier: &std::sync::Barrier, item: &mut u32, _: &mut ()) {
            if *item < 2 {
                barrier.wait(); // both threads take one of the first two
            }
            if std::thread::current().name() == Some("panicky-0") {
                panic!("item {item}");
            }
        }
        let crew = Crew::new(1, "panicky", panic_on_the_helper).unwrap();
        let _ = crew.run(std::sync::Barrier::new(2), (0..10).collect(), &mut ());
    }
}
