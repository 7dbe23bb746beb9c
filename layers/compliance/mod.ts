export { DoNotCallLive } from "./doNotCall.ts"
