---------------------------------------------------------------------------------------------
-- networks as stacks of blocks
---------------------------------------------------------------------------------------------
-- A network acts on a d_0 x t token matrix Y (tokens are columns) through blocks in order; each
-- block maps width d to its out (default d). Residual => n (true = 1) on block i ends a residual group of
-- the blocks i-n+1..i: the group returns its input plus the n blocks applied in order (Residual => true:
-- Y + block(Y)); groups are nested or disjoint and keep the width. Every kind takes Residual:
--   attention (Heads h, attention a, Value b, Out, Causal, Residual): sum_h V_h Y S_h with
--     S_h = (K_h Y)^T (Q_h Y), entry (i, j) = <K_h y_i, Q_h y_j> (key i, query j); Causal keeps the
--     entries i <= j; V_h = O_h W_h when a value dim b is given. Weights per head: Q, K (a x d), then
--     V (out x d), or W (b x d) and O (out x b);
--   mlp (hidden m, Degree r, Out, Residual): D (U Y)^{o r}, U (m x d), D (out x m), power entrywise;
--   linear (out, Residual): P Y, P (out x d);
--   power (degree r, Residual): Y^{o r} entrywise, no weights;
--   position (Residual): Y + E, E (d x tokens) a learned positional embedding, one column per token.
-- Bias => true makes every projection of a block affine, the bias broadcast over the tokens:
-- per head Q Y + bq, K Y + bk, V Y + bv (or W Y + bw, then one output bias bo after the head sum);
-- U Y + bu and D (.) + bd in an mlp; P Y + bp. Biases come after their block's (head's) matrices and
-- are named letter_(i,r) (letter_(i,h,r) per head with several heads; bo belongs to the block).
-- The weights are ordered block by block, inside a block as listed, every matrix row by row. Their
-- names are letter_(i,r,c) for block i, or letter_(i,h,r,c) in an attention block with several heads
-- (q k v w o, u d, p): the names lightning_cas uses in Python. The old arguments (widths, attention,
-- tokens, Heads) are the stack of plain attention blocks (full V, not causal, not residual).

lcasPositive = (name, L) -> (
    if not instance(L, List) or #L == 0 or not all(L, n -> instance(n, ZZ) and n > 0) then
        error("LightningCAS: " | name | " must be a nonempty list of positive integers"));

lcasTokensCheck = tokens -> (
    if not instance(tokens, ZZ) or tokens < 1 then error "LightningCAS: tokens must be a positive integer");

lcasColumnsCheck = (columns, tokens) -> (
    if not instance(columns, ZZ) or columns < 1 or columns > tokens then
        error "LightningCAS: Columns must be an integer between 1 and the number of tokens");

lcasPositiveInteger = (what, n) -> if not instance(n, ZZ) or n < 1 then
    error("LightningCAS: " | what | " must be a positive integer, got " | toString n);

---------------------------------------------------------------------------------------------
-- blocks
---------------------------------------------------------------------------------------------

NetworkBlock = new Type of HashTable
NetworkBlock.synonym = "network block"
-- toString, net and print all give the short description (the hash table itself is not for reading)
toString NetworkBlock := B -> toString B#"kind" | "(" | demark(", ", lcasBlockFields B) | ")"
net NetworkBlock := B -> net toString B

lcasBlockFields = B -> (
    shown := {"heads", "attention", "value", "hidden", "degree", "out"};
    n := lcasResidual B;
    apply(select(shown, k -> B#?k and B#k =!= null), k -> k | " " | toString B#k)
        | select({"causal"}, k -> B#?k and B#k) | (if n == 1 then {"residual"} else if n > 1 then
            {"residual " | toString n} else {}) | select({"bias"}, k -> B#?k and B#k))

-- the number of blocks of the residual group a block ends (Residual => true is 1, false or none 0)
lcasResidual = B -> (if not B#?"residual" or B#"residual" === false then 0
    else if B#"residual" === true then 1 else B#"residual")
lcasResidualCheck = x -> if not (instance(x, Boolean) or instance(x, ZZ) and x >= 0) then
    error("LightningCAS: Residual must be true, false or a block count >= 0, got " | toString x);
lcasResidualValid = B -> (not B#?"residual" or instance(B#"residual", Boolean)
    or instance(B#"residual", ZZ) and B#"residual" >= 0)

isWellDefined NetworkBlock := B -> (
    kind := if B#?"kind" then B#"kind";
    positive := k -> instance(B#k, ZZ) and B#k > 0;
    optional := k -> B#k === null or positive k;
    if B#?"bias" and not instance(B#"bias", Boolean) or not lcasResidualValid B then false
    else if kind === "attention" then positive "heads" and positive "attention" and optional "value" and optional "out"
        and instance(B#"causal", Boolean)
    else if kind === "mlp" then positive "hidden" and positive "degree" and optional "out"
    else if kind === "linear" then positive "out"
    else if kind === "power" then positive "degree"
    else if kind === "position" then true
    else false)

attentionBlock = method(Options => {Heads => 1, Value => null, Out => null, Causal => false, Residual => false,
        Normalization => "none", Bias => false})
attentionBlock ZZ := o -> a -> (
    if o.Normalization =!= "none" then
        error("LightningCAS: only polynomial blocks can be built; " | toString o.Normalization
            | " attention is not polynomial (use Normalization => \"none\")");
    lcasPositiveInteger("attention", a);
    lcasPositiveInteger("Heads", o.Heads);
    if o.Value =!= null then lcasPositiveInteger("Value", o.Value);
    if o.Out =!= null then lcasPositiveInteger("Out", o.Out);
    lcasBoolean("Causal", o.Causal);
    lcasResidualCheck o.Residual;
    lcasBoolean("Bias", o.Bias);
    new NetworkBlock from {"kind" => "attention", "heads" => o.Heads, "attention" => a, "value" => o.Value,
        "out" => o.Out, "causal" => o.Causal, "residual" => o.Residual, "bias" => o.Bias})

mlpBlock = method(Options => {Degree => 2, Out => null, Residual => false, Bias => false})
mlpBlock ZZ := o -> m -> (
    lcasPositiveInteger("hidden", m);
    lcasPositiveInteger("Degree", o.Degree);
    if o.Out =!= null then lcasPositiveInteger("Out", o.Out);
    lcasResidualCheck o.Residual;
    lcasBoolean("Bias", o.Bias);
    new NetworkBlock from {"kind" => "mlp", "hidden" => m, "degree" => o.Degree, "out" => o.Out,
        "residual" => o.Residual, "bias" => o.Bias})

linearBlock = method(Options => {Bias => false, Residual => false})
linearBlock ZZ := o -> out -> (
    lcasPositiveInteger("out", out);
    lcasBoolean("Bias", o.Bias);
    lcasResidualCheck o.Residual;
    new NetworkBlock from {"kind" => "linear", "out" => out, "bias" => o.Bias, "residual" => o.Residual})

powerBlock = method(Options => {Residual => false})
powerBlock ZZ := o -> r -> (
    lcasPositiveInteger("degree", r);
    lcasResidualCheck o.Residual;
    new NetworkBlock from {"kind" => "power", "degree" => r, "residual" => o.Residual})

-- a function with options, not a nullary method: its documentation has no "()" node to cite
positionBlock = {Residual => false} >> o -> x -> (
    if x =!= () then error "positionBlock takes no arguments (only Residual => n)";
    lcasResidualCheck o.Residual;
    new NetworkBlock from {"kind" => "position", "residual" => o.Residual})

-- a block from its integer list, the form the Python side writes into scripts:
-- {0, heads, a, b, out, causal, residual} (b = 0: full V), {1, hidden, degree, out, residual},
-- {2, out}, {3, degree}; causal is 0 or 1, residual n >= 0 (the blocks of the group it ends); a last 0
-- or 1 after attention, mlp and linear lists is the bias flag (absent: no biases); a linear list may go
-- on with its residual, {2, out, bias, residual}, and a power list {3, degree, residual}
lcasFlag = (what, x) -> (if x === 0 then false else if x === 1 then true
    else error("LightningCAS: " | what | " must be 0 or 1 in a block list, got " | toString x));
lcasBlockFromList = (L, i) -> (
    where := "block " | toString i;
    if not instance(L, List) or #L == 0 or not all(L, x -> instance(x, ZZ)) then
        error("LightningCAS: " | where | " must be a list of integers, got " | toString L);
    code := L#0;
    size := {7, 5, 2, 2, 2};
    longest := {8, 6, 4, 3, 2};
    if code < 0 or code > 4 then error("LightningCAS: " | where | " has the unknown kind code " | toString code);
    if #L < size#code or #L > longest#code then
        error("LightningCAS: " | where | " needs " | toString size#code | " integers, got " | toString L);
    bias := code < 3 and #L > size#code and lcasFlag(where | " bias", L#(size#code));
    count := k -> (if L#k < 0 then error("LightningCAS: " | where | " residual must be >= 0, got " | toString L#k);
        if L#k == 0 then false else if L#k == 1 then true else L#k); -- 0 and 1 as the builders' false and true
    if code == 0 then attentionBlock(L#2, Heads => L#1, Value => (if L#3 == 0 then null else L#3),
        Out => L#4, Causal => lcasFlag(where | " causal", L#5), Residual => count 6, Bias => bias)
    else if code == 1 then mlpBlock(L#1, Degree => L#2, Out => L#3, Residual => count 4, Bias => bias)
    else if code == 2 then linearBlock(L#1, Bias => bias, Residual => if #L > 3 then count 3 else false)
    else if code == 3 then powerBlock(L#1, Residual => if #L > 2 then count 2 else false)
    else positionBlock(Residual => count 1))

-- the block with its out resolved for input width d (checked), and its weight matrices in order
lcasResolve = (B, d, i) -> (
    kind := B#"kind";
    out := if kind === "power" or kind === "position" then d else if B#"out" === null then d else B#"out";
    if lcasResidual B == 1 and out != d then
        error("LightningCAS: block " | toString i | " is residual, so its out must be its input width "
            | toString d | ", got " | toString out);
    new NetworkBlock from merge(B, new HashTable from {"out" => out, "input" => d}, (x, y) -> y))

-- the residual groups: each starts at block 0 or later, keeps the width, and two are nested or disjoint
lcasGroupsCheck = (d0, resolved) -> (
    widths := {d0} | apply(resolved, B -> B#"out");
    groups := select(apply(#resolved, i -> (i + 1 - lcasResidual resolved#i, i)), g -> g#0 <= g#1);
    scan(groups, g -> (
        (s, e) := g;
        if s < 0 then error("LightningCAS: block " | toString e | " ends a residual group of "
            | toString(e - s + 1) | " blocks, reaching before block 0");
        if widths#s != widths#(e + 1) then error("LightningCAS: block " | toString e | " ends a residual group "
            | "from width " | toString widths#s | " to width " | toString widths#(e + 1) | "; it must keep the width")));
    scan(groups, g -> scan(groups, h -> if g#1 < h#1 and g#0 < h#0 and h#0 <= g#1 then
        error("LightningCAS: the residual groups ending at blocks " | toString g#1 | " and " | toString h#1
            | " overlap; they must be nested or disjoint"))))

-- (head, letter, rows, cols) of a resolved block's weight matrices, in canonical order
-- (a bias is a matrix with one column, its letter b + the letter of its matrix)
lcasBiased = B -> B#?"bias" and B#"bias";
lcasBlockMatrices = B -> (
    (kind, d, out) := (B#"kind", B#"input", B#"out");
    b := lcasBiased B;
    if kind === "attention" then flatten (for h from 1 to B#"heads" list (
        {(h, "q", B#"attention", d), (h, "k", B#"attention", d)}
        | (if B#"value" === null then {(h, "v", out, d)} else {(h, "w", B#"value", d), (h, "o", out, B#"value")})
        | (if not b then {} else {(h, "bq", B#"attention", 1), (h, "bk", B#"attention", 1),
                if B#"value" === null then (h, "bv", out, 1) else (h, "bw", B#"value", 1)})))
        | (if b and B#"value" =!= null then {(1, "bo", out, 1)} else {})
    else if kind === "mlp" then {(1, "u", B#"hidden", d), (1, "d", out, B#"hidden")}
        | (if b then {(1, "bu", B#"hidden", 1), (1, "bd", out, 1)} else {})
    else if kind === "linear" then {(1, "p", out, d)} | (if b then {(1, "bp", out, 1)} else {})
    else if kind === "position" then {(1, "e", d, B#"tokens")}
    else {})

---------------------------------------------------------------------------------------------
-- the network
---------------------------------------------------------------------------------------------

NeuralNetwork = new Type of HashTable
NeuralNetwork.synonym = "neural network"
toString NeuralNetwork := N -> ("a network on " | toString N#"tokens" | " token(s) of width " | toString N#"input"
    | ": " | demark(" -> ", apply(N#"blocks", toString)) | " (" | toString N#"parameters" | " weights)")
net NeuralNetwork := N -> net toString N

isWellDefined NeuralNetwork := N -> (
    blocks := N#"blocks";
    widths := {N#"input"} | apply(blocks, B -> B#"out");
    instance(N#"tokens", ZZ) and N#"tokens" >= 1 and #blocks >= 1 and all(blocks, isWellDefined)
    and N#"widths" === widths and all(#blocks, i -> (blocks#i)#"input" == widths#i)
    and all(#blocks, i -> (n := lcasResidual blocks#i; n == 0 or i + 1 >= n and widths#(i + 1 - n) == widths#(i + 1)))
    and N#"parameters" == sum(N#"matrices", m -> m#3 * m#4)
    and #(N#"weights") == N#"parameters")

neuralNetwork = method()
neuralNetwork(ZZ, ZZ, List) := (inputWidth, tokens, blocks) -> (
    lcasPositiveInteger("the input width", inputWidth);
    lcasTokensCheck tokens;
    if #blocks == 0 then error "LightningCAS: a network needs at least one block";
    d := inputWidth;
    resolved := for i from 0 to #blocks - 1 list (
        B := blocks#i;
        if instance(B, List) then B = lcasBlockFromList(B, i);
        if not instance(B, NetworkBlock) or not isWellDefined B then
            error("LightningCAS: block " | toString i | " must be a network block or its integer list");
        R := lcasResolve(B, d, i);
        if R#"kind" === "position" then R = new NetworkBlock from merge(R, hashTable {"tokens" => tokens}, (x, y) -> y);
        d = R#"out";
        R);
    lcasGroupsCheck(inputWidth, resolved);
    -- one entry per weight matrix: (block i, head, letter, rows, cols)
    matrices := flatten apply(#resolved, i -> apply(lcasBlockMatrices resolved#i, m -> prepend(i + 1, m)));
    several := i -> (resolved#(i-1))#"kind" === "attention" and (resolved#(i-1))#"heads" > 1;
    weights := flatten apply(matrices, m -> (
            (i, h, letter, rows, cols) := m;
            perHead := several i and letter =!= "bo";
            if letter#0 === "b" then apply(rows, r -> if perHead then (getSymbol letter)_(i, h, r+1)
                else (getSymbol letter)_(i, r+1))
            else flatten table(rows, cols, (r, c) -> if perHead then (getSymbol letter)_(i, h, r+1, c+1)
                else (getSymbol letter)_(i, r+1, c+1))));
    if #weights == 0 then error "LightningCAS: the network has no weights (only power blocks)";
    new NeuralNetwork from {"input" => inputWidth, "tokens" => tokens, "blocks" => resolved,
        "widths" => {inputWidth} | apply(resolved, B -> B#"out"), "matrices" => matrices,
        "parameters" => #weights, "weights" => weights,
        "causal" => any(resolved, B -> B#?"causal" and B#"causal"), "bias" => any(resolved, B -> lcasBiased B or B#"kind" === "position")})  -- E is a constant too

-- the paper's network: widths {d_0, ..., d_L}, attention {a_1, ..., a_L}, optional heads per layer
neuralNetwork(List, List, ZZ) := (widths, attention, tokens) -> neuralNetwork(widths, attention, tokens, null)
neuralNetwork(List, List, ZZ, Nothing) := neuralNetwork(List, List, ZZ, List) := (widths, attention, tokens, heads) -> (
    lcasPositive("widths", widths);
    lcasPositive("attention", attention);
    if #widths != #attention + 1 then
        error "LightningCAS: widths must have one entry more than attention (d_0, ..., d_L and a_1, ..., a_L)";
    hs := if heads === null then toList(#attention : 1) else heads;
    lcasPositive("Heads", hs);
    if #hs != #attention then error "LightningCAS: Heads must give one head count per layer";
    lcasTokensCheck tokens;
    neuralNetwork(widths#0, tokens, apply(#attention, i -> attentionBlock(attention#i, Heads => hs#i,
        Out => widths#(i+1)))))

-- the output columns a computation uses: the first `columns`; in a causal network the last ones (its
-- last token sees every token, and zero tokens stay zero through every block, so the last column's
-- coefficients determine the function; the first column sees the first token only). With biases a
-- zero token is not zero after a block, so a causal network with biases uses every column.
lcasOutputColumns = (N, columns) -> (
    if N#"causal" and N#"bias" then toList(0 .. N#"tokens" - 1)
    else if N#"causal" then toList(N#"tokens" - columns .. N#"tokens" - 1)
    else toList(0 .. columns - 1))

-- the flat weight values cut into blocks: per block a list of heads (Q, K, V) or (Q, K, W, O) for
-- attention, (U, D) for mlp, (P) for linear, () for power; with biases each is followed by its bias
-- columns in order (head 1 of a factored attention block carries the output bias bo last)
lcasBlockWeights = (N, values) -> (
    pos := 0;
    lcasCutWeights(N, (m, n) -> (M := matrix table(m, n, (r, c) -> values#(pos + r*n + c)); pos = pos + m*n; M)))

-- the same cut with the next m x n weight matrix made by take1 (plain or dual matrices)
lcasCutWeights = (N, take1) -> (
    for B in N#"blocks" list (
        b := lcasBiased B;
        if B#"kind" === "attention" then (
            heads := for h from 1 to B#"heads" list (
                Q := take1(B#"attention", B#"input"); K := take1(B#"attention", B#"input");
                main := if B#"value" === null then (Q, K, take1(B#"out", B#"input"))
                    else (W := take1(B#"value", B#"input"); (Q, K, W, take1(B#"out", B#"value")));
                if not b then main else (
                    bq := take1(B#"attention", 1); bk := take1(B#"attention", 1);
                    main | (bq, bk, take1(if B#"value" === null then B#"out" else B#"value", 1))));
            if b and B#"value" =!= null then heads = {append(first heads, take1(B#"out", 1))} | drop(heads, 1);
            heads)
        else if B#"kind" === "mlp" then (U := take1(B#"hidden", B#"input"); D := take1(B#"out", B#"hidden");
            if b then (bu := take1(B#"hidden", 1); (U, D, bu, take1(B#"out", 1))) else (U, D))
        else if B#"kind" === "linear" then (P := take1(B#"out", B#"input");
            if b then (P, take1(B#"out", 1)) else 1 : P)
        else if B#"kind" === "position" then 1 : take1(B#"input", B#"tokens")
        else ()))

-- entrywise power and the causal mask, for matrices (and, in Dimension.m2, for dual matrices)
lcasEntrywisePower = method()
lcasEntrywisePower(Matrix, ZZ) := (M, r) -> matrix table(numrows M, numcols M, (i, j) -> M_(i, j)^r)
lcasCausalMask = method()
lcasCausalMask Matrix := S -> matrix table(numrows S, numcols S, (i, j) -> if i <= j then S_(i, j) else 0_(ring S))

-- a row of t ones, of Y's kind (a matrix here; a dual matrix in Dimension.m2)
lcasOnesRow = method()
lcasOnesRow Matrix := Y -> map((ring Y)^1, (ring Y)^(numcols Y), (i, j) -> 1)

-- the network on the token matrix X (d_0 x t), written once: matrices or dual matrices alike
lcasForward = (N, blockWeights, X) -> (
    Z := X;
    inputs := new MutableHashTable;  -- block i -> its input (a residual group starting there adds it back)
    scan(#(N#"blocks"), i -> (
        B := (N#"blocks")#i;
        W := blockWeights#i;
        Y := Z;
        inputs#i = Y;
        b := lcasBiased B;
        ones := if b then lcasOnesRow Y;
        affine := (M, Yin, c) -> if c === null then M * Yin else M * Yin + c * ones;
        full := B#"kind" === "attention" and B#"value" === null;
        out := if B#"kind" === "attention" then (
                sum1 := fold((A, C) -> A + C, apply(W, head -> (
                    (Q, K) := (head#0, head#1);
                    nv := if full then 3 else 4;
                    (bq, bk, bv) := if b then (head#nv, head#(nv+1), head#(nv+2)) else (null, null, null);
                    S := transpose affine(K, Y, bk) * affine(Q, Y, bq);
                    if B#"causal" then S = lcasCausalMask S;
                    VY := if full then affine(head#2, Y, bv) else head#3 * affine(head#2, Y, bv);
                    VY * S)));
                if b and not full then sum1 + (first W)#7 * ones else sum1)
            else if B#"kind" === "mlp" then (
                if b then affine(W#1, lcasEntrywisePower(affine(W#0, Y, W#2), B#"degree"), W#3)
                else W#1 * lcasEntrywisePower(W#0 * Y, B#"degree"))
            else if B#"kind" === "linear" then (if b then affine(W#0, Y, W#1) else W#0 * Y)
            else if B#"kind" === "position" then Y + W#0
            else lcasEntrywisePower(Y, B#"degree");
        n := lcasResidual B;
        Z = if n > 0 then inputs#(i + 1 - n) + out else out));
    Z)

-- the polynomial ring of weights over kk, and the token ring T over it
lcasTokenSymbols = (d0, tokens) -> flatten table(d0, tokens, (r, j) -> (getSymbol "x")_(r+1, j+1));
lcasTower = (N, kk) -> (
    R := kk[N#"weights"];
    T := R[lcasTokenSymbols(N#"input", N#"tokens")];
    X := matrix table(N#"input", N#"tokens", (r, j) -> T_(r*(N#"tokens") + j));
    (R, T, X));

-- every coefficient (in the tokens) of the entries of a matrix over T, as elements of R
lcasCoefficients = (M, R) -> select(
    flatten apply(flatten entries M, f -> apply(flatten entries last coefficients f, c -> lift(c, R))),
    g -> g != 0);

---------------------------------------------------------------------------------------------
-- the network's weights and output
---------------------------------------------------------------------------------------------

lightningWeights = method(Options => {Heads => null})
lightningWeights NeuralNetwork := o -> N -> N#"weights"
lightningWeights(List, List) := o -> (widths, attention) -> (neuralNetwork(widths, attention, 1, o.Heads))#"weights"

lightningNetwork = method(Options => {Heads => null, CoefficientRing => QQ})
lightningNetwork NeuralNetwork := o -> N -> (
    ws := N#"weights";
    S := (o.CoefficientRing)[ws | lcasTokenSymbols(N#"input", N#"tokens")];
    X := matrix table(N#"input", N#"tokens", (r, j) -> S_(#ws + r*(N#"tokens") + j));
    lcasForward(N, lcasBlockWeights(N, take(gens S, #ws)), X))
lightningNetwork(List, List, ZZ) := o -> (widths, attention, tokens) ->
    lightningNetwork(neuralNetwork(widths, attention, tokens, o.Heads), CoefficientRing => o.CoefficientRing)
