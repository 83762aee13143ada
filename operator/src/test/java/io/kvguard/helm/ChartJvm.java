package io.kvguard.helm;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Quantity;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The java command the chart's default Deployment runs the operator with: its JAVA_TOOL_OPTIONS
 * (ExitOnOutOfMemoryError, MaxRAMPercentage) against its container's memory limit, given to the JVM
 * as {@code -XX:MaxRAM} so that the heap is the one a cluster gives it, whatever this machine has.
 * For tests that must fail the way the operator's pod would.
 */
public final class ChartJvm {
  private ChartJvm() {}

  /** {@code java} with the chart's options, this JVM's class path, then {@code mainAndArgs}. */
  public static List<String> command(Class<?> main, String... args) {
    Container operator = ChartDefaultsTest.operatorContainer(RenderedChart.render(""));
    String options = ChartDefaultsTest.env(operator).get("JAVA_TOOL_OPTIONS");
    Quantity limit = operator.getResources().getLimits().get("memory");
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(Arrays.asList(options.trim().split("\\s+")));
    command.add("-XX:MaxRAM=" + Quantity.getAmountInBytes(limit).longValueExact());
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
    command.addAll(Arrays.asList(args));
    return command;
  }
}
