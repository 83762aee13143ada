package io.kvguard.webhook;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kvguard.customresource.ModelDeployment;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The webhook server alone in a child JVM ({@link WebhookHeapIT}): args are the certificate
 * directory and a ModelDeployment file. Prints {@code serving <port>}, then answers on standard
 * output, one line each, the commands read on standard input: {@code mark} (collects, forgets the
 * peaks, prints {@code heap <used bytes>}) and {@code peak} (prints {@code peak <bytes>}: the
 * highest heap occupancy since the mark, garbage included, the sum over the heap's pools).
 */
public final class WebhookJvmMain {
  private WebhookJvmMain() {}

  public static void main(String[] args) throws Exception {
    ModelDeployment policy =
        new KubernetesSerialization()
            .unmarshal(Files.readString(Path.of(args[1])), ModelDeployment.class);
    WebhookServer server =
        new WebhookServer(
            0,
            new ServingCertificate(Path.of(args[0])),
            new AdmissionHandler(namespace -> List.of(policy), new SimpleMeterRegistry()));
    server.start();
    System.out.println("serving " + server.port());
    BufferedReader commands =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String command = commands.readLine(); command != null; command = commands.readLine()) {
      switch (command) {
        case "mark" -> {
          System.gc();
          heapPools().forEach(MemoryPoolMXBean::resetPeakUsage);
          System.out.println(
              "heap " + ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        case "peak" ->
            System.out.println(
                "peak " + heapPools().stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum());
        default -> System.out.println("unknown " + command);
      }
    }
    server.close();
  }

  private static List<MemoryPoolMXBean> heapPools() {
    return ManagementFactory.getMemoryPoolMXBeans().stream()
        .filter(p -> p.getType() == MemoryType.HEAP)
        .toList();
  }
}
