package io.kvguard.testing;

import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.lang.reflect.Proxy;

/**
 * An informer that is not fabric8's: it answers only whether it has synced and its name, which is
 * all a stopped-informer handler may ask of an informer type it does not know.
 */
public final class FakeInformer {
  private FakeInformer() {}

  public static SharedIndexInformer<?> of(String name, boolean synced) {
    return (SharedIndexInformer<?>)
        Proxy.newProxyInstance(
            FakeInformer.class.getClassLoader(),
            new Class<?>[] {SharedIndexInformer.class},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "hasSynced" -> synced;
                  case "toString" -> name;
                  default -> throw new UnsupportedOperationException(method.getName());
                });
  }
}
