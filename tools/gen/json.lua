-- json.lua: a small JSON reader for the Kafka protocol schemas, which are
-- JSON plus // line comments (and, defensively, /* */ block comments).
-- Owns nothing beyond the parse: decode(text) returns Lua tables where
-- arrays keep their order (field order is wire order) and JSON null is
-- json.null. Errors raise with a line number so a bad schema names itself.
local json = {}

json.null = setmetatable({}, { __tostring = function() return "null" end })

local function fail(s, pos, msg)
    local line = 1
    for _ in s:sub(1, pos):gmatch("\n") do line = line + 1 end
    error(("json: line %d: %s"):format(line, msg), 0)
end

-- Skips whitespace and comments; returns the next significant position.
local function skip(s, pos)
    while true do
        local p = s:find("[^ \t\r\n]", pos)
        if not p then return #s + 1 end
        local two = s:sub(p, p + 1)
        if two == "//" then
            local nl = s:find("\n", p, true)
            pos = nl and nl + 1 or #s + 1
        elseif two == "/*" then
            local e = s:find("*/", p + 2, true)
            if not e then fail(s, p, "unterminated block comment") end
            pos = e + 2
        else
            return p
        end
    end
end

local escapes = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }

local function parse_string(s, pos)
    -- pos is at the opening quote
    local out, i = {}, pos + 1
    while true do
        local c = s:sub(i, i)
        if c == "" then fail(s, pos, "unterminated string") end
        if c == '"' then return table.concat(out), i + 1 end
        if c == "\\" then
            local e = s:sub(i + 1, i + 1)
            if e == "u" then
                local hex = s:sub(i + 2, i + 5)
                if not hex:match("^%x%x%x%x$") then fail(s, i, "bad \\u escape") end
                out[#out + 1] = utf8.char(tonumber(hex, 16))
                i = i + 6
            elseif escapes[e] then
                out[#out + 1] = escapes[e]
                i = i + 2
            else
                fail(s, i, "bad escape")
            end
        else
            out[#out + 1] = c
            i = i + 1
        end
    end
end

local parse_value

local function parse_object(s, pos)
    local obj = {}
    pos = skip(s, pos + 1)
    if s:sub(pos, pos) == "}" then return obj, pos + 1 end
    while true do
        if s:sub(pos, pos) ~= '"' then fail(s, pos, "expected object key") end
        local key
        key, pos = parse_string(s, pos)
        pos = skip(s, pos)
        if s:sub(pos, pos) ~= ":" then fail(s, pos, "expected ':'") end
        local v
        v, pos = parse_value(s, skip(s, pos + 1))
        if obj[key] ~= nil then fail(s, pos, "duplicate key " .. key) end
        obj[key] = v
        pos = skip(s, pos)
        local c = s:sub(pos, pos)
        if c == "}" then return obj, pos + 1 end
        if c ~= "," then fail(s, pos, "expected ',' or '}'") end
        pos = skip(s, pos + 1)
    end
end

local function parse_array(s, pos)
    local arr = {}
    pos = skip(s, pos + 1)
    if s:sub(pos, pos) == "]" then return arr, pos + 1 end
    while true do
        local v
        v, pos = parse_value(s, pos)
        arr[#arr + 1] = v
        pos = skip(s, pos)
        local c = s:sub(pos, pos)
        if c == "]" then return arr, pos + 1 end
        if c ~= "," then fail(s, pos, "expected ',' or ']'") end
        pos = skip(s, pos + 1)
    end
end

function parse_value(s, pos)
    pos = skip(s, pos)
    local c = s:sub(pos, pos)
    if c == "{" then return parse_object(s, pos) end
    if c == "[" then return parse_array(s, pos) end
    if c == '"' then return parse_string(s, pos) end
    if s:sub(pos, pos + 3) == "true" then return true, pos + 4 end
    if s:sub(pos, pos + 4) == "false" then return false, pos + 5 end
    if s:sub(pos, pos + 3) == "null" then return json.null, pos + 4 end
    local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
    if num and #num > 0 then
        local v = math.tointeger(tonumber(num)) or tonumber(num)
        if v == nil then fail(s, pos, "bad number") end
        return v, pos + #num
    end
    fail(s, pos, "unexpected character '" .. c .. "'")
end

-- Parses one JSON document; raises on error or trailing garbage.
function json.decode(text)
    local v, pos = parse_value(text, 1)
    pos = skip(text, pos)
    if pos <= #text then fail(text, pos, "trailing data") end
    return v
end

return json
