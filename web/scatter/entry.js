// The WebGL scatter the page draws corpus maps with: regl-scatterplot, re-exported as one ES module.
import createScatterplot, { createRenderer } from "regl-scatterplot";

export { createScatterplot, createRenderer };
export const version = "1.16.0";
