// LangGraph's own conformance suite for checkpoint savers, run unchanged on
// SessiondbSaver. Run by vitest (the suite is written for it), from
// langgraph_validation.test.mjs; the package's CLI (validate-checkpointer)
// cannot run it in 1.1.1: its runner imports a schema dist/types.js no
// longer exports, and exits 1 for any initializer.
import { validate } from "@langchain/langgraph-checkpoint-validation";
import initializer from "./langgraph_initializer.mjs";

validate(initializer);
