import * as fs from "node:fs"
import { apiTypesFile, generateApiTypes } from "./apiTypes.ts"

fs.writeFileSync(apiTypesFile, await generateApiTypes())
