---------------------------------------------------------------------------------------------
-- typed results for Macaulay2 users: a neurovariety as one object with a readable summary
---------------------------------------------------------------------------------------------
-- The record functions (dimensionRecord, ...) are the contract with the Python side and keep their
-- keys; a NeurovarietyResult is for people: the same numbers, the network, and (exactly computed)
-- the ideal itself, shown by net as a short table. Its keys are strings, as in every other type
-- of the package, and every key is always present (null when the method does not compute it).

NeurovarietyResult = new Type of HashTable
NeurovarietyResult.synonym = "neurovariety result"

lcasResultKeys = {"network", "dimension", "parameters", "fiber_dimension", "ambient", "method", "prime",
    "degree", "linear_span", "ideal"}

lcasMethodText = R -> (
    if R#"method" === "Jacobian" then "Jacobian rank at a random point mod " | toString R#"prime"
    else "implicit ideal over " | (if R#"prime" == 0 then "QQ" else "ZZ/" | toString R#"prime"))

toString NeurovarietyResult := R -> ("a neurovariety of dimension " | toString R#"dimension" | " in "
    | toString R#"ambient" | " coefficients (" | toString R#"parameters" | " weights, " | R#"method" | ")")
net NeurovarietyResult := R -> (
    rows := {("dimension", R#"dimension"), ("parameters", R#"parameters"),
        ("fiber dimension", R#"fiber_dimension"), ("ambient", R#"ambient")}
        | (if R#"degree" =!= null then {("degree", R#"degree")} else {})
        | (if R#"linear_span" =!= null then {("linear span", R#"linear_span")} else {})
        | {("method", lcasMethodText R)};
    width := max apply(rows, r -> #(r#0));
    stack({"neurovariety of " | toString R#"network"}
        | apply(rows, r -> "  " | r#0 | concatenate(width - #(r#0) + 2 : " ") | toString r#1)))

isWellDefined NeurovarietyResult := R -> (
    all(lcasResultKeys, k -> R#?k) and #(keys R) == #lcasResultKeys
    and instance(R#"network", NeuralNetwork) and R#"parameters" == (R#"network")#"parameters"
    and instance(R#"dimension", ZZ) and 0 <= R#"dimension" and R#"dimension" <= R#"parameters"
    and R#"fiber_dimension" == R#"parameters" - R#"dimension" and R#"dimension" <= R#"ambient"
    and member(R#"method", {"Jacobian", "Implicit"})
    and (R#"method" === "Jacobian" or (instance(R#"ideal", Ideal) and dim R#"ideal" == R#"dimension")))

neurovariety = method(Options => {Heads => null, Strategy => "Jacobian", CoefficientRing => null, Columns => 1})
neurovariety NeuralNetwork := o -> N -> (
    lcasColumnsCheck(o.Columns, N#"tokens");
    P := N#"parameters";
    kk := null;
    fields := if o.Strategy === "Jacobian" then (
        kk = if o.CoefficientRing === null then ZZ/lcasDefaultPrime else o.CoefficientRing;
        J := coefficientJacobian(N, CoefficientRing => kk, Columns => o.Columns);
        {"dimension" => rank J, "ambient" => numrows J, "degree" => null, "linear_span" => null, "ideal" => null})
    else if o.Strategy === "Implicit" then (
        kk = if o.CoefficientRing === null then QQ else o.CoefficientRing;
        (I, ncoeff, nbasis) := lcasImplicit(N, kk, o.Columns);
        {"dimension" => dim I, "ambient" => ncoeff, "degree" => degree I, "linear_span" => nbasis, "ideal" => I})
    else error "LightningCAS: Strategy must be \"Jacobian\" or \"Implicit\"";
    d := (new HashTable from fields)#"dimension";
    new NeurovarietyResult from fields | {"network" => N, "parameters" => P, "fiber_dimension" => P - d,
        "method" => o.Strategy, "prime" => char kk})
neurovariety(List, List, ZZ) := o -> (widths, attention, tokens) ->
    neurovariety(neuralNetwork(widths, attention, tokens, o.Heads), Strategy => o.Strategy,
        CoefficientRing => o.CoefficientRing, Columns => o.Columns)
