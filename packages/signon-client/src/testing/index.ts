export { StandInSignon, type StandInClient, type StandInOptions } from "./stand-in-signon.js";
export { ManualClock } from "./manual-clock.js";
