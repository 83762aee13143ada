package io.kvguard;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** When a stopped informer makes the replica step down, and when it does not. */
class InformerStoppedTest {
  private final AtomicBoolean stopping = new AtomicBoolean();
  private final AtomicInteger steppedDown = new AtomicInteger();
  private final InformerStopped handler =
      new InformerStopped(stopping::get, steppedDown::incrementAndGet);

  private static SharedIndexInformer<?> informer(boolean synced) {
    return (SharedIndexInformer<?>)
        Proxy.newProxyInstance(
            InformerStoppedTest.class.getClassLoader(),
            new Class<?>[] {SharedIndexInformer.class},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "hasSynced" -> synced;
                  case "toString" -> "pods-inference";
                  default -> throw new UnsupportedOperationException(method.getName());
                });
  }

  @Test
  void anInformerThatStopsForGoodAfterSyncingStepsTheReplicaDown() {
    handler.onStop(informer(true), new IllegalStateException("watch refused: 403"));
    assertThat(steppedDown).hasValue(1);
  }

  @Test
  void anInformerStoppingWhileTheReplicaStopsIsExpected() {
    stopping.set(true);
    handler.onStop(informer(true), new IllegalStateException("Client is closed"));
    assertThat(steppedDown).hasValue(0);
  }

  @Test
  void anInformerStoppedWithoutErrorOrBeforeItSyncedDoesNotStepDown() {
    handler.onStop(informer(true), null);
    // Before its sync a failure is the start's, which Operator.start reports.
    handler.onStop(informer(false), new IllegalStateException("list refused"));
    assertThat(steppedDown).hasValue(0);
  }
}
